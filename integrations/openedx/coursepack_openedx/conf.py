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
    # Where PUBLISH_TARGET is served to devices (https://cdn.example.org/courses): each course's
    # folder under it gets absolute offline_download.file_url values, as the official apps need.
    "PUBLIC_URL": None,
    # A publish fires a burst of events; the build waits this long after the first one.
    "DEBOUNCE_SECONDS": 60,
    "BUILD_TIMEOUT_SECONDS": 1800,
    "PUBLISH_TIMEOUT_SECONDS": 1800,
    # One build of a course at a time, across workers: a lock in Django's cache (shared by Studio
    # and the workers), renewed between export, build and publish. A worker killed mid-build
    # blocks the course this long at most. None: the longer of the two timeouts + 600 s.
    "LOCK_SECONDS": None,
    # Retries of a build that could not start (export failed, exit 2), with exponential backoff.
    "MAX_RETRIES": 3,
    "RETRY_BACKOFF_SECONDS": 60,
    # Dotted path of `export(course_key, folder)` writing the course's OLX into folder; the
    # default uses the platform's own export (imported only when a build runs).
    "EXPORT_FUNCTION": "coursepack_openedx.export.export_with_platform",
    # Dotted path of a function returning every course key, for `coursepack_build --all`.
    "COURSE_LISTER": "coursepack_openedx.export.list_platform_courses",
    # LMS side: the offline sync endpoints (docs/offline-sync-api.md).
    # The LMS's own API authentication, in its order: a JWT (header or cookie), an OAuth2
    # bearer token of the LMS's provider, the browser session (with CSRF).
    "AUTHENTICATION_CLASSES": [
        "edx_rest_framework_extensions.auth.jwt.authentication.JwtAuthentication",
        "openedx.core.lib.api.authentication.BearerAuthenticationAllowInactiveUser",
        "edx_rest_framework_extensions.auth.session.authentication.SessionAuthenticationAllowInactiveUser",
    ],
    "MAX_BATCH_ITEMS": 100,
    "MAX_BATCH_BYTES": 1024 * 1024,
    "MAX_VERSION_QUERIES": 5000,
    # An answer made before the due date that reaches the LMS after it, but within this window,
    # is kept for the course team instead of refused (the LMS will not grade a closed problem).
    "LATE_SYNC_GRACE_SECONDS": 3 * 24 * 3600,
    # What a `retry` result tells the device to wait before sending the item again.
    "RETRY_AFTER_SECONDS": 60,
    # A second batch of the same learner and course waits for the first: the lock's lifetime.
    "BATCH_LOCK_SECONDS": 300,
    # The tracking-log events a device may send: what the LMS's own pages emit for these actions.
    "EVENT_NAMES": [
        "problem_check", "problem_show", "problem_reset",
        "load_video", "play_video", "pause_video", "seek_video", "speed_change_video", "stop_video",
        "complete_video", "show_transcript", "hide_transcript",
        "edx.ui.lms.sequence.tab_selected", "edx.ui.lms.link_clicked", "page_view",
    ],
}


def setting(name):
    return {**DEFAULTS, **getattr(settings, "COURSEPACK", {})}[name]
