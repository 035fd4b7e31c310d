"""`celery -A tests.worker_app worker`: the burst harness's workers (DJANGO_SETTINGS_MODULE
tests.worker_settings). The database is migrated here, in the main process, before the pool
forks its children."""

import django

django.setup()

from celery import Celery  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402

import coursepack_openedx.tasks  # noqa: E402,F401 (registers build_course)

app = Celery("coursepack-burst")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.set_default()
call_command("migrate", verbosity=0)
connections.close_all()
