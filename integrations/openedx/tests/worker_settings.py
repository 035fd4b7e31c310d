"""Settings of the Celery worker processes of the burst harness (tests/burst.py), and of the
process sending the burst outside pytest: the tests' settings with a database file, the redis
cache and broker shared by every process, and COURSEPACK, all from the harness's config file."""

import json
import os

from .settings import *  # noqa: F401,F403 (the tests' settings, then what the workers share)

_burst = json.load(open(os.environ["COURSEPACK_BURST_CONFIG"], encoding="utf-8"))
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": _burst["database"], "OPTIONS": {"timeout": 60}}}
CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _burst["cache_url"]}}
CELERY_BROKER_URL = _burst["broker_url"]
CELERY_TASK_ALWAYS_EAGER = False
COURSEPACK = _burst["coursepack"]
