"""The Celery task: builds run on the platform's own workers, so they scale out with them."""

import logging

from celery import shared_task
from django.utils import timezone

from .conf import setting
from .models import CoursepackRun
from .runner import CannotBuild, build_and_publish

log = logging.getLogger("coursepack")


@shared_task(bind=True, name="coursepack_openedx.build_course")
def build_course(self, course_id, trigger="manual"):
    started = timezone.now()
    attempt = self.request.retries + 1
    try:
        outcome = build_and_publish(course_id)
    except CannotBuild as error:
        if self.request.retries < setting("MAX_RETRIES"):
            delay = setting("RETRY_BACKOFF_SECONDS") * 2 ** self.request.retries
            log.warning("coursepack: %s: attempt %s failed, retrying in %s s: %s", course_id, attempt, delay, error)
            raise self.retry(exc=error, countdown=delay)
        log.error("coursepack: %s: giving up after %s attempts: %s", course_id, attempt, error)
        CoursepackRun.objects.create(
            course_id=course_id, trigger=trigger, status=CoursepackRun.FAILED, message=str(error),
            attempts=attempt, started_at=started, finished_at=timezone.now())
        return {"course_id": course_id, "status": CoursepackRun.FAILED}
    CoursepackRun.objects.create(
        course_id=course_id, trigger=trigger, status=outcome.status, build_exit=outcome.build_exit,
        publish_exit=outcome.publish_exit, counts={"build": outcome.counts, "publish": outcome.publish_counts},
        failed_blocks=outcome.failed_blocks, attempts=attempt, started_at=started, finished_at=timezone.now())
    return {"course_id": course_id, "status": outcome.status, "build_exit": outcome.build_exit,
            "publish_exit": outcome.publish_exit}
