"""The one place where the offline sync endpoints call the LMS. Each function imports
edx-platform lazily, so the plugin loads (and is tested) without it; the tests replace these
functions, and only these, with a stand-in LMS.

Nothing here decides a conflict: these functions report what the LMS says, and the sync
modules apply the rules of docs/offline-sync-api.md to that."""

import json
from dataclasses import dataclass
from datetime import datetime

from .iso_time import parse_iso_time


@dataclass(frozen=True)
class BlockState:
    """A learner's state of one problem, as the LMS holds it."""

    attempts: int = 0
    # None: unlimited attempts.
    max_attempts: int | None = None
    # The learner's own due date (with any extension the course team gave), None if none.
    due: datetime | None = None
    # When the LMS last graded an answer of this learner to this problem, by whatever route.
    last_submitted_at: datetime | None = None


@dataclass(frozen=True)
class LmsResponse:
    """problem_check's HTTP answer, as the LMS's own JavaScript receives it."""

    status: int
    body: dict


def has_course_access(user, course_key):
    """True when the learner may submit in the course: enrolled, or course staff."""
    from common.djangoapps.student.models import CourseEnrollment  # edx-platform
    from lms.djangoapps.courseware.access import has_access

    return CourseEnrollment.is_enrolled(user, course_key) or bool(has_access(user, "staff", course_key))


def block_state(user, usage_key):
    """The learner's attempts and last submission (from the problem's stored state), the
    problem's attempt limit, and the learner's due date (edx-when, with extensions)."""
    from edx_when.api import get_date_for_block  # edx-platform's dates
    from lms.djangoapps.courseware.models import StudentModule
    from xmodule.modulestore.django import modulestore

    block = modulestore().get_item(usage_key)
    stored = StudentModule.objects.filter(student=user, module_state_key=usage_key).first()
    state = json.loads(stored.state) if stored and stored.state else {}
    submitted = state.get("last_submission_time")
    return BlockState(
        attempts=int(state.get("attempts", 0)),
        max_attempts=block.max_attempts,
        due=get_date_for_block(usage_key.course_key, usage_key, user=user),
        last_submitted_at=parse_iso_time(submitted, naive_is_utc=True),
    )


def post_problem_check(user, usage_key, answers):
    """Runs the problem's own `problem_check` handler through the LMS's XBlock handler view,
    exactly as the courseware page's JavaScript does, and returns its HTTP answer."""
    from django.http import Http404
    from django.test import RequestFactory
    from lms.djangoapps.courseware.block_render import handle_xblock_callback  # edx-platform

    request = RequestFactory().post("/", data=answers)
    request.user = user
    request.session = {}
    # The view checks CSRF for a logged-in user; the batch request that carries this answer
    # passed the endpoint's own authentication (a JWT, or a session with its CSRF token).
    request._dont_enforce_csrf_checks = True
    try:
        response = handle_xblock_callback(request, str(usage_key.course_key), str(usage_key), "xmodule_handler",
                                          "problem_check")
    except Http404:  # what the LMS answers, through its middleware, for a block it does not have
        return LmsResponse(status=404, body={})
    try:
        body = json.loads(response.content)
    except ValueError:
        body = {}
    return LmsResponse(status=response.status_code, body=body if isinstance(body, dict) else {})


def emit_event(user, course_key, name, data, context):
    """Writes one event into the LMS's tracking log, with the learner and course in its context
    as the LMS's own events have them, and `context` (the offline timing) beside them."""
    from eventtracking import tracker  # edx-platform's tracking log

    with tracker.get_tracker().context("coursepack.offline", {
        "user_id": user.id, "username": user.username, "course_id": str(course_key), **context,
    }):
        tracker.emit(name, data)

