from django.contrib import admin
from django.urls import path

# The admin, where operators read CoursepackRun records.
urlpatterns = [path("admin/", admin.site.urls)]
