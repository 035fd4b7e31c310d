"""Settings, from `settings.COURSEPACK` (a dict), with the defaults an operator expects."""

from django.conf import settings

DEFAULTS = {
    # The coursepack executable (coursepack-sync must sit beside it for `publish`).
    "BINARY": "coursepack",
    # Per course: <STATE_ROOT>/<course id>/published is the build output and publish state.
    "STATE_ROOT": "/var/lib/coursepack",
    # Where clients download from: s3://bucket/prefix or a folder. None: build only.
    "PUBLISH_TARGET": None,
    "ENDPOINT_URL": None,
    # Path-style addressing (bucket in the path): what MinIO, Ceph and moto expect.
    "PATH_STYLE": True,
    "AWS_PROFILE": None,
    "LMS_URL": None,
    # A publish fires a burst of events; the build waits this long after the first one.
    "DEBOUNCE_SECONDS": 60,
    "BUILD_TIMEOUT_SECONDS": 1800,
    "PUBLISH_TIMEOUT_SECONDS": 1800,
    # Retries of a build that could not start (export failed, exit 2), with exponential backoff.
    "MAX_RETRIES": 3,
    "RETRY_BACKOFF_SECONDS": 60,
    # Dotted path of `export(course_key, folder)` writing the course's OLX into folder; the
    # default uses the platform's own export (imported only when a build runs).
    "EXPORT_FUNCTION": "coursepack_openedx.export.export_with_platform",
    # Dotted path of a function returning every course key, for `coursepack_build --all`.
    "COURSE_LISTER": "coursepack_openedx.export.list_platform_courses",
}


def setting(name):
    return {**DEFAULTS, **getattr(settings, "COURSEPACK", {})}[name]
