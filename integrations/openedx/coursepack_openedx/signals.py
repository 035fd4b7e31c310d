"""Receivers of Studio's publish events: a burst of events for one course becomes one build."""

import logging
import time

from django.core.cache import cache

from .conf import setting

log = logging.getLogger("coursepack")


def on_xblock_published(sender=None, signal=None, xblock_info=None, **kwargs):
    schedule(str(xblock_info.usage_key.course_key), trigger="publish")


def on_course_import_completed(sender=None, signal=None, course=None, **kwargs):
    schedule(str(course.course_key), trigger="import")


def pending_key(course_id):
    return f"coursepack:pending:{course_id}"


def schedule(course_id, trigger):
    """Queues one build per course per debounce window. The first event of a burst queues the
    task with a countdown of the window; the others find the course's key and add nothing, and
    the build, running after the window, sees everything the burst published. The key goes when
    the build starts (a publish after that needs a build of its own), or at the latest
    DEBOUNCE_SECONDS + BUILD_TIMEOUT_SECONDS after the first event, should the task be lost."""
    from .tasks import build_course

    debounce = setting("DEBOUNCE_SECONDS")
    window = {"trigger": trigger, "closes": time.time() + debounce}
    if not cache.add(pending_key(course_id), window, timeout=debounce + setting("BUILD_TIMEOUT_SECONDS")):
        log.debug("coursepack: %s: build already queued", course_id)
        return False
    log.info("coursepack: %s: %s event, build queued in %s s", course_id, trigger, debounce)
    build_course.apply_async(args=[course_id, trigger], countdown=debounce)
    return True


def close_window(course_id):
    """Called as a build starts: once its window has passed, publishes from now on may come
    after its export, so they queue the next build. (An eager task, in tests and development,
    runs inside the window's first event: the rest of the burst still finds the window open.)"""
    window = cache.get(pending_key(course_id))
    if isinstance(window, dict) and window.get("closes", 0) <= time.time():
        cache.delete(pending_key(course_id))
