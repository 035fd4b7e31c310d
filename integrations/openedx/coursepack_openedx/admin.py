from django.contrib import admin

from .models import CoursepackRun


@admin.register(CoursepackRun)
class CoursepackRunAdmin(admin.ModelAdmin):
    # One row per attempt: a failure or timeout and its retries each show up with their message.
    list_display = ("course_id", "status", "attempts", "short_message", "trigger", "build_exit", "publish_exit",
                    "finished_at")
    list_filter = ("status", "trigger")
    search_fields = ("course_id", "message")
    readonly_fields = [field.name for field in CoursepackRun._meta.fields]

    @admin.display(description="message")
    def short_message(self, run):
        return run.message if len(run.message) <= 200 else run.message[:200] + "…"
