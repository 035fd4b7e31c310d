from django.db import models


class CoursepackRun(models.Model):
    """One build (and publish) of a course's offline bundles: what an operator checks in the
    admin to see the last result."""

    SUCCEEDED = "succeeded"
    PARTIAL = "partial"
    FAILED = "failed"

    course_id = models.CharField(max_length=255, db_index=True)
    trigger = models.CharField(max_length=32)
    status = models.CharField(max_length=16)
    build_exit = models.IntegerField(null=True)
    publish_exit = models.IntegerField(null=True)
    counts = models.JSONField(default=dict)
    failed_blocks = models.JSONField(default=list)
    message = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=1)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()

    class Meta:
        ordering = ["-finished_at"]

    def __str__(self):
        return f"{self.course_id} {self.status} at {self.finished_at:%Y-%m-%d %H:%M:%S}"
