"""Django settings for the plugin's own tests: no edx-platform, a scratch SQLite file, Celery
running tasks in the calling process."""

import os
import tempfile

SECRET_KEY = "coursepack-tests"
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.admin",
    "django.contrib.messages",
    "django.contrib.sessions",
    "rest_framework",
    "coursepack_openedx",
]
# A file, not ":memory:": Django shares an in-memory test database between threads through
# SQLite's shared cache, whose table locks fail at once ("database table is locked") instead of
# waiting, and the real-worker tests read the table while a Celery worker thread writes it. A
# file waits on its lock for `timeout` seconds, as the LMS's own database would.
DATABASES = {"default": {
    "ENGINE": "django.db.backends.sqlite3",
    "NAME": os.path.join(tempfile.gettempdir(), "coursepack-plugin-tests.sqlite3"),
    "OPTIONS": {"timeout": 30},
    "TEST": {"NAME": os.path.join(tempfile.gettempdir(), f"coursepack-plugin-tests-{os.getpid()}.sqlite3")},
}}
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

# The LMS's JWT configuration as edx-platform has it: tokens signed with the LMS's private RSA
# key, checked against its public key set (and a symmetric issuer secret, the older way). The
# key is made per test run. The public key set matters: edx-drf-extensions with none configured
# accepts a token of any signature (its asymmetric check passes on an empty key set).
def _signing_keys():
    import json

    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_jwk = json.loads(RSAAlgorithm.to_jwk(private))
    public_jwk = json.loads(RSAAlgorithm.to_jwk(private.public_key()))
    private_jwk["kid"] = public_jwk["kid"] = "lms-test"
    return json.dumps(private_jwk), json.dumps({"keys": [public_jwk]})


JWT_PRIVATE_SIGNING_JWK, JWT_PUBLIC_SIGNING_JWK_SET = _signing_keys()
JWT_AUTH = {
    "JWT_ISSUERS": [{"ISSUER": "http://lms.test/oauth2", "AUDIENCE": "lms-test",
                     "SECRET_KEY": "jwt-test-secret-of-at-least-32-bytes"}],
    "JWT_ISSUER": "http://lms.test/oauth2",
    "JWT_AUDIENCE": "lms-test",
    "JWT_SECRET_KEY": "jwt-test-secret-of-at-least-32-bytes",
    "JWT_PUBLIC_SIGNING_JWK_SET": JWT_PUBLIC_SIGNING_JWK_SET,
    "JWT_PRIVATE_SIGNING_JWK": JWT_PRIVATE_SIGNING_JWK,
    "JWT_SIGNING_ALGORITHM": "RS512",
    "JWT_DECODE_HANDLER": "edx_rest_framework_extensions.auth.jwt.decoder.jwt_decode_handler",
    "JWT_AUTH_HEADER_PREFIX": "JWT",
    "JWT_AUTH_COOKIE": "edx-jwt-cookie",
}
