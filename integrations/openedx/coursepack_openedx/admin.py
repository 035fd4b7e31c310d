from django.contrib import admin

from .models import CoursepackRun, SyncedItem


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


@admin.register(SyncedItem)
class SyncedItemAdmin(admin.ModelAdmin):
    # Answers held for the course team (a late sync) are found by filtering on status "accepted"
    # and reading the result's "held" and the payload's answers.
    list_display = ("item_id", "kind", "user", "course_id", "usage_id", "status", "occurred_at", "processed_at")
    list_filter = ("kind", "status")
    search_fields = ("item_id", "course_id", "usage_id", "user__username")
    readonly_fields = [field.name for field in SyncedItem._meta.fields]
