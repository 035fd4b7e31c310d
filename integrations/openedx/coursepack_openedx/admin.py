from django.contrib import admin

from .models import CoursepackRun


@admin.register(CoursepackRun)
class CoursepackRunAdmin(admin.ModelAdmin):
    list_display = ("course_id", "status", "trigger", "build_exit", "publish_exit", "attempts", "finished_at")
    list_filter = ("status", "trigger")
    search_fields = ("course_id",)
    readonly_fields = [field.name for field in CoursepackRun._meta.fields]
