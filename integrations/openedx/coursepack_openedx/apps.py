from django.apps import AppConfig


class CoursepackConfig(AppConfig):
    """Registered in Studio (`cms.djangoapp`: builds on publish) and in the LMS (`lms.djangoapp`:
    the offline sync endpoints) through the entry points of the plugin framework."""

    name = "coursepack_openedx"
    verbose_name = "coursepack offline bundles"
    default_auto_field = "django.db.models.BigAutoField"

    # Read by edx-django-utils' plugin framework; the receivers are also connected in ready(),
    # so the app works the same when installed by hand in INSTALLED_APPS.
    plugin_app = {
        "url_config": {
            "lms.djangoapp": {"namespace": "coursepack", "regex": r"^api/coursepack/", "relative_path": "urls"},
        },
        "signals_config": {
            "cms.djangoapp": {
                "relative_path": "signals",
                "receivers": [
                    {"receiver_func_name": "on_xblock_published",
                     "signal_path": "openedx_events.content_authoring.signals.XBLOCK_PUBLISHED"},
                    {"receiver_func_name": "on_course_import_completed",
                     "signal_path": "openedx_events.content_authoring.signals.COURSE_IMPORT_COMPLETED"},
                ],
            }
        },
    }

    def ready(self):
        from openedx_events.content_authoring.signals import COURSE_IMPORT_COMPLETED, XBLOCK_PUBLISHED

        from . import signals

        XBLOCK_PUBLISHED.connect(signals.on_xblock_published, dispatch_uid="coursepack.xblock_published")
        COURSE_IMPORT_COMPLETED.connect(signals.on_course_import_completed, dispatch_uid="coursepack.course_import")
