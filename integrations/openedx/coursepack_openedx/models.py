from django.db import models


class CoursepackRun(models.Model):
    """One attempt to build (and publish) a course's offline bundles: what an operator checks in
    the admin. A failed or timed-out attempt has its own record (with its message and attempt
    number) before it is retried, so repeated failures stay visible."""

    SUCCEEDED = "succeeded"
    PARTIAL = "partial"
    FAILED = "failed"
    # Killed after BUILD_TIMEOUT_SECONDS or PUBLISH_TIMEOUT_SECONDS.
    TIMEOUT = "timeout"

    course_id = models.CharField(max_length=255, db_index=True)
    trigger = models.CharField(max_length=32)
    status = models.CharField(max_length=16)
    build_exit = models.IntegerField(null=True)
    publish_exit = models.IntegerField(null=True)
    counts = models.JSONField(default=dict)
    failed_blocks = models.JSONField(default=list)
    message = models.TextField(blank=True)
    # Where the course's manifest was published: its own folder of PUBLISH_TARGET.
    manifest = models.CharField(max_length=1024, blank=True, default="")
    attempts = models.PositiveIntegerField(default=1)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()

    class Meta:
        ordering = ["-finished_at"]

    def __str__(self):
        return f"{self.course_id} {self.status} at {self.finished_at:%Y-%m-%d %H:%M:%S}"
