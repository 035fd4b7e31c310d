from django.contrib import admin
from django.urls import path
from edx_django_utils.plugins import get_plugin_url_patterns

# The admin, where operators read CoursepackRun records, and the plugin's LMS URLs mounted the
# way the LMS mounts them: through the plugin framework, from the installed `lms.djangoapp` entry point.
urlpatterns = [path("admin/", admin.site.urls), *get_plugin_url_patterns("lms.djangoapp")]
