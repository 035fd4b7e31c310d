"""The Celery task: builds run on the platform's own workers, so they scale out with them."""

import logging

from celery import shared_task
from django.utils import timezone

from .conf import setting
from .models import CoursepackRun
from .published_blocks import record_published_blocks
from .runner import BuildFailed, build_and_publish

log = logging.getLogger("coursepack")


@shared_task(bind=True, name="coursepack_openedx.build_course")
def build_course(self, course_id, trigger="manual"):
    """One attempt. A failed one (export error, exit 2, a publish that did not finish, a
    timeout) is recorded as its own CoursepackRun, then retried through Celery (`self.retry`,
    so the broker holds the retry and any worker may run it) after RETRY_BACKOFF_SECONDS × 2^n,
    MAX_RETRIES times."""
    started = timezone.now()
    attempt = self.request.retries + 1
    try:
        outcome = build_and_publish(course_id)
    except (BuildFailed, OSError) as error:  # OSError: the binary is missing or cannot run
        status = getattr(error, "status", CoursepackRun.FAILED)
        CoursepackRun.objects.create(
            course_id=course_id, trigger=trigger, status=status, message=str(error), attempts=attempt,
            started_at=started, finished_at=timezone.now())
        retries = setting("MAX_RETRIES")
        if self.request.retries < retries:
            delay = setting("RETRY_BACKOFF_SECONDS") * 2 ** self.request.retries
            log.warning("coursepack: %s: attempt %s %s, retrying in %s s: %s", course_id, attempt, status, delay, error)
            raise self.retry(exc=error, countdown=delay, max_retries=retries)
        log.error("coursepack: %s: giving up after %s attempts: %s", course_id, attempt, error)
        return {"course_id": course_id, "status": status, "attempts": attempt}
    record_versions(course_id, outcome)
    CoursepackRun.objects.create(
        course_id=course_id, trigger=trigger, status=outcome.status, build_exit=outcome.build_exit,
        publish_exit=outcome.publish_exit, counts={"build": outcome.counts, "publish": outcome.publish_counts},
        failed_blocks=outcome.failed_blocks, manifest=outcome.manifest, attempts=attempt, started_at=started,
        finished_at=timezone.now())
    return {"course_id": course_id, "status": outcome.status, "build_exit": outcome.build_exit,
            "publish_exit": outcome.publish_exit, "manifest": outcome.manifest}


def record_versions(course_id, outcome):
    """The LMS side answers devices from these versions; they change only once clients can get
    the manifest they come from (published, or built where no PUBLISH_TARGET is set)."""
    try:
        count = record_published_blocks(course_id, outcome.local_manifest)
    except (OSError, ValueError) as error:
        log.warning("coursepack: %s: block versions not recorded: %s", course_id, error)
        return
    log.info("coursepack: %s: %s block versions recorded for the LMS", course_id, count)
