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
ROOT_URLCONF = "tests.urls"
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
CELERY_TASK_ALWAYS_EAGER = True
# Retries run eagerly only when the task result, not the caller, receives the Retry.
CELERY_TASK_EAGER_PROPAGATES = False
LOGGING = {"version": 1, "disable_existing_loggers": False}
COURSEPACK = {}
