"""The LMS side of offline sync: batch endpoints for submissions and events, and the
block-versions check (docs/offline-sync-api.md). Thin: reading the batch, the conflict rules
and the calls into the LMS live in their own modules."""

from django.core.cache import cache
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.utils import timezone
from django.utils.module_loading import import_string
from opaque_keys import InvalidKeyError
from opaque_keys.edx.keys import CourseKey
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from . import lms_boundary
from .batch import BadBatch, read_json_object, read_batch
from .batch_runner import run_batch
from .conf import setting
from .event_processor import EventProcessor
from .models import SyncedItem
from .published_blocks import compare_versions
from .submission_processor import SubmissionProcessor


def error(status, code, message, retry_after=None):
    response = JsonResponse({"error": code, "message": message}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


class CourseEndpoint(APIView):
    """Authenticated with the LMS's own classes; the learner must have access to the course."""

    permission_classes = [IsAuthenticated]
    # Errors DRF answers itself (401, a CSRF 403) are JSON too, whatever the device accepts.
    renderer_classes = [JSONRenderer]

    def get_authenticators(self):
        return [import_string(path)() for path in setting("AUTHENTICATION_CLASSES")]

    def post(self, request, course_id):
        try:
            course_key = CourseKey.from_string(course_id)
            body = self.bounded_body(request)
            self.check_access(request.user, course_key)
            return self.answer(request.user, course_key, body)
        except InvalidKeyError:
            return error(400, "invalid", f"{course_id} is not a course id")
        except BadBatch as bad:
            return error(bad.status, bad.code, bad.message, bad.retry_after)

    def bounded_body(self, request):
        limit = setting("MAX_BATCH_BYTES")
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > limit:
            raise BadBatch(413, "too_large", f"a batch is at most {limit} bytes, this one {declared}")
        # Django reads no more than CONTENT_LENGTH; past its own DATA_UPLOAD_MAX_MEMORY_SIZE it refuses.
        try:
            return request.body
        except RequestDataTooBig:
            raise BadBatch(413, "too_large", "the body is larger than the LMS takes") from None

    def check_access(self, user, course_key):
        try:
            allowed = lms_boundary.has_course_access(user, course_key)
        except Exception as failure:  # the LMS raises anything; the device tries again later
            raise BadBatch(503, "lms_unavailable", f"the LMS could not check access to {course_key}: {failure}",
                           retry_after=setting("RETRY_AFTER_SECONDS")) from failure
        if not allowed:
            raise BadBatch(403, "not_enrolled", f"{user.username} is not enrolled in {course_key}")


class BatchEndpoint(CourseEndpoint):
    kind = None
    processor_class = None

    def answer(self, user, course_key, body):
        received_at = timezone.now()
        batch = read_batch(body, course_key, received_at, setting("MAX_BATCH_ITEMS"))
        # One batch at a time per learner and course: two at once could each run an item the
        # other has not recorded yet.
        lock = f"coursepack:batch:{user.pk}:{course_key}"
        if not cache.add(lock, 1, timeout=setting("BATCH_LOCK_SECONDS")):
            raise BadBatch(409, "batch_in_progress", "another batch of this learner and course is being processed")
        try:
            results = run_batch(user, course_key, self.kind, batch, self.processor_class(user, course_key, received_at))
        finally:
            cache.delete(lock)
        return JsonResponse({
            "received_at": received_at.isoformat(),
            "clock_offset_seconds": batch.clock_offset.total_seconds(),
            "results": results,
        })


class SubmissionsEndpoint(BatchEndpoint):
    kind = SyncedItem.SUBMISSION
    processor_class = SubmissionProcessor


class EventsEndpoint(BatchEndpoint):
    kind = SyncedItem.EVENT
    processor_class = EventProcessor


class BlockVersionsEndpoint(CourseEndpoint):
    def answer(self, user, course_key, body):
        versions = read_json_object(body).get("versions")
        if not isinstance(versions, dict) or not all(isinstance(value, str) for value in versions.values()):
            raise BadBatch(400, "invalid", "versions must map usage ids to the versions the device holds")
        if len(versions) > setting("MAX_VERSION_QUERIES"):
            raise BadBatch(413, "too_many_items", f"at most {setting('MAX_VERSION_QUERIES')} versions per request")
        return JsonResponse(compare_versions(course_key, versions))
