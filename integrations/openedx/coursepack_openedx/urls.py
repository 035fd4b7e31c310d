"""Mounted by the plugin framework under the LMS's api/coursepack/ (apps.py, url_config)."""

from django.urls import re_path

from .views import BlockVersionsEndpoint, EventsEndpoint, SubmissionsEndpoint

COURSE = r"^v1/courses/(?P<course_id>[^/]+)"

urlpatterns = [
    re_path(COURSE + r"/submissions$", SubmissionsEndpoint.as_view(), name="submissions"),
    re_path(COURSE + r"/events$", EventsEndpoint.as_view(), name="events"),
    re_path(COURSE + r"/block-versions$", BlockVersionsEndpoint.as_view(), name="block-versions"),
]
