"""Django settings for the plugin's own tests: no edx-platform, an in-memory database, Celery
running tasks in the calling process."""

SECRET_KEY = "coursepack-tests"
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.admin",
    "django.contrib.messages",
    "django.contrib.sessions",
    "coursepack_openedx",
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
CELERY_TASK_ALWAYS_EAGER = True
# Retries run eagerly only when the task result, not the caller, receives the Retry.
CELERY_TASK_EAGER_PROPAGATES = False
LOGGING = {"version": 1, "disable_existing_loggers": False}
COURSEPACK = {}
