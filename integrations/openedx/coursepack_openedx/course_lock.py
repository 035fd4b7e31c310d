"""One build of a course at a time, across worker processes and machines, and the newest publish
last: a lock and a rebuild request per course in Django's cache, which the platform shares
between Studio and every Celery worker (memcached or redis; `add` is atomic in both)."""

import time
import uuid

from django.core.cache import cache

from .conf import setting

# The export has no timeout of its own; the lock allows it this long on top of the longer of the
# build and publish timeouts (the lock is renewed between the steps).
EXPORT_ALLOWANCE_SECONDS = 600


def lock_key(course_id):
    return f"coursepack:building:{course_id}"


def rerun_key(course_id):
    return f"coursepack:rerun:{course_id}"


def lock_seconds():
    """How long a lock outlives its last renewal: a worker killed mid-build blocks the course's
    builds this long at most."""
    configured = setting("LOCK_SECONDS")
    if configured:
        return configured
    return max(setting("BUILD_TIMEOUT_SECONDS"), setting("PUBLISH_TIMEOUT_SECONDS")) + EXPORT_ALLOWANCE_SECONDS


class CourseLock:
    """Held by the task that builds a course. Its value names its holder (a token) and when it
    expires, so a task that finds it taken knows when a killed holder stops counting."""

    def __init__(self, course_id, token):
        self.course_id = course_id
        self.token = token

    @classmethod
    def acquire(cls, course_id):
        token = uuid.uuid4().hex
        seconds = lock_seconds()
        if not cache.add(lock_key(course_id), {"token": token, "expires": time.time() + seconds}, timeout=seconds):
            return None
        # This build exports after every publish that asked for a rebuild until now.
        cache.delete(rerun_key(course_id))
        return cls(course_id, token)

    def owned(self):
        held = cache.get(lock_key(self.course_id))
        return isinstance(held, dict) and held.get("token") == self.token

    def renew(self):
        """Called between the steps, each bounded by its own timeout."""
        if self.owned():
            seconds = lock_seconds()
            cache.set(lock_key(self.course_id), {"token": self.token, "expires": time.time() + seconds}, timeout=seconds)

    def release(self):
        # Not atomic with the check, but a holder cannot outlive its lock: every step is killed
        # at its timeout, which the lock's lifetime exceeds.
        if self.owned():
            cache.delete(lock_key(self.course_id))


def seconds_until_expiry(course_id):
    """How long the current holder's lock has left (0 when there is none)."""
    held = cache.get(lock_key(course_id))
    if not isinstance(held, dict):
        return 0
    return max(0.0, held.get("expires", 0) - time.time())


def request_rerun(course_id):
    """Asks whoever holds the lock for one build after theirs (their export may predate this
    request's publishes). True when this call made the request, False when one was pending."""
    return cache.add(rerun_key(course_id), time.time(), timeout=2 * lock_seconds())


def rerun_requested(course_id):
    return cache.get(rerun_key(course_id)) is not None
