"""The Celery task: builds run on the platform's own workers, so they scale out with them."""

import logging

from celery import shared_task
from django.utils import timezone

from .conf import setting
from .course_lock import CourseLock, request_rerun, rerun_requested, seconds_until_expiry
from .models import CoursepackRun
from .published_blocks import record_published_blocks
from .runner import BuildFailed, build_and_publish
from .signals import close_window

log = logging.getLogger("coursepack")

# The trigger of a build that a publish during another build of the course asked for.
RERUN = "rerun"


@shared_task(bind=True, name="coursepack_openedx.build_course")
def build_course(self, course_id, trigger="manual"):
    """One attempt, under the course's lock. A failed one (export error, exit 2, a publish that
    did not finish, a timeout) is recorded as its own CoursepackRun, then retried through Celery
    (`self.retry`, so the broker holds the retry and any worker may run it) after
    RETRY_BACKOFF_SECONDS × 2^n, MAX_RETRIES times. When another worker is building the course,
    this task asks it for one rebuild after its own and ends: the newest publish is built last."""
    if trigger not in (RERUN, "manual"):
        close_window(course_id)  # the window of the publishes that queued this task
    if trigger == RERUN and not rerun_requested(course_id):
        return {"course_id": course_id, "status": "skipped"}  # another task already rebuilt it
    lock = CourseLock.acquire(course_id) or defer(self, course_id, trigger)
    if lock is None:
        return {"course_id": course_id, "status": "deferred"}
    started = timezone.now()
    try:
        outcome = build_and_publish(course_id, on_step=lock.renew)
    except (BuildFailed, OSError) as error:  # OSError: the binary is missing or cannot run
        failure = error
    else:
        failure = None
    finally:
        lock.release()  # before a retry, which may run at once (eagerly) and need the lock
    if failure is not None:
        return retry_or_give_up(self, course_id, trigger, started, failure)
    record_versions(course_id, outcome)
    CoursepackRun.objects.create(
        course_id=course_id, trigger=trigger, status=outcome.status, build_exit=outcome.build_exit,
        publish_exit=outcome.publish_exit, counts={"build": outcome.counts, "publish": outcome.publish_counts},
        failed_blocks=outcome.failed_blocks, manifest=outcome.manifest, attempts=self.request.retries + 1,
        started_at=started, finished_at=timezone.now())
    rebuild_if_requested(course_id)
    return {"course_id": course_id, "status": outcome.status, "build_exit": outcome.build_exit,
            "publish_exit": outcome.publish_exit, "manifest": outcome.manifest}


def defer(task, course_id, trigger):
    """Another worker holds the course's lock and may have exported before this task's
    publishes: request one rebuild after it. Returns the lock if the holder let go meanwhile."""
    made = request_rerun(course_id)
    # The holder checks for a request after it lets go: try once more, or it may have missed ours.
    lock = CourseLock.acquire(course_id)
    if lock is not None:
        return lock
    log.info("coursepack: %s: being built by another worker, one rebuild requested after it", course_id)
    # If the holder was killed, nobody would see the request: look again when its lock expires
    # (the task that made the request, and each look after it; eager tasks have no countdown).
    if (made or trigger == RERUN) and not task.request.is_eager:
        build_course.apply_async(args=[course_id, RERUN], countdown=seconds_until_expiry(course_id) + 1)
    return None


def rebuild_if_requested(course_id):
    if rerun_requested(course_id):
        log.info("coursepack: %s: published during the build, rebuilding", course_id)
        build_course.apply_async(args=[course_id, RERUN])


def retry_or_give_up(task, course_id, trigger, started, error):
    status = getattr(error, "status", CoursepackRun.FAILED)
    attempt = task.request.retries + 1
    CoursepackRun.objects.create(
        course_id=course_id, trigger=trigger, status=status, message=str(error), attempts=attempt,
        started_at=started, finished_at=timezone.now())
    retries = setting("MAX_RETRIES")
    if task.request.retries < retries:
        delay = setting("RETRY_BACKOFF_SECONDS") * 2 ** task.request.retries
        log.warning("coursepack: %s: attempt %s %s, retrying in %s s: %s", course_id, attempt, status, delay, error)
        raise task.retry(exc=error, countdown=delay, max_retries=retries)
    log.error("coursepack: %s: giving up after %s attempts: %s", course_id, attempt, error)
    rebuild_if_requested(course_id)  # a publish made during the failed attempts still gets its build
    return {"course_id": course_id, "status": status, "attempts": attempt}


def record_versions(course_id, outcome):
    """The LMS side answers devices from these versions; they change only once clients can get
    the manifest they come from (published, or built where no PUBLISH_TARGET is set)."""
    try:
        count = record_published_blocks(course_id, outcome.local_manifest)
    except (OSError, ValueError) as error:
        log.warning("coursepack: %s: block versions not recorded: %s", course_id, error)
        return
    log.info("coursepack: %s: %s block versions recorded for the LMS", course_id, count)
