from django.conf import settings
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


class SyncedItem(models.Model):
    """The one result an offline item (a submission or an event) got, kept by the item's id so
    that a device sending it again gets the same answer and the LMS handler does not run twice.
    Only definite results are kept; a `retry` is not, so the item runs again when resent."""

    SUBMISSION = "submission"
    EVENT = "event"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16)
    item_id = models.CharField(max_length=64)
    course_id = models.CharField(max_length=255, db_index=True)
    usage_id = models.CharField(max_length=255, blank=True, default="")
    # SHA-256 of the item as sent: the same id with other content is a client error, not a repeat.
    digest = models.CharField(max_length=64)
    # The device's time of the answer or event, corrected by the batch's clock offset.
    occurred_at = models.DateTimeField()
    processed_at = models.DateTimeField()
    status = models.CharField(max_length=16)
    result = models.JSONField()
    # What was sent, so that an answer held for the course team (a late sync) can be read.
    payload = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "kind", "item_id"], name="coursepack_synced_item_once")]
        indexes = [models.Index(fields=["user", "kind", "usage_id", "processed_at"])]

    def __str__(self):
        return f"{self.kind} {self.item_id} of {self.user_id}: {self.status}"


class PublishedBlock(models.Model):
    """A block's version in the course's last published manifest (its `content_hash`), written
    by the Studio side after each build so that the LMS side can tell a device which of its
    blocks are outdated: both sides share the database, not the build folder."""

    course_id = models.CharField(max_length=255, db_index=True)
    usage_id = models.CharField(max_length=255)
    content_hash = models.CharField(max_length=128)
    last_modified = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["course_id", "usage_id"], name="coursepack_published_block_once")]

    def __str__(self):
        return f"{self.usage_id} {self.content_hash[:12]}"
