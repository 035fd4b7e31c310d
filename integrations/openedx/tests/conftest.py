import os

from celery import Celery

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# The platform configures Celery from Django settings; the tests do the same with an eager app.
app = Celery("coursepack-tests")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.set_default()
