"""An offline answer to a problem, checked against the conflict rules of
docs/offline-sync-api.md in the order written there, then graded by the problem's own
problem_check handler."""

from datetime import timedelta

from django.db import transaction
from django.db.models import Max

from . import item_result, lms_boundary
from .conf import setting
from .item_result import Reason
from .models import SyncedItem
from .problem_check import read_problem_check
from .published_blocks import current_version

PROBLEM_TYPE = "problem"


class SubmissionProcessor:
    def __init__(self, user, course_key, received_at):
        self.user = user
        self.course_key = course_key
        self.received_at = received_at
        self.retry_after = setting("RETRY_AFTER_SECONDS")

    def process(self, item):
        refusal = self.malformed(item) or self.outdated(item)
        if refusal:
            return refusal
        try:
            # A savepoint: an LMS database error rolls back its own writes and leaves the
            # request's transaction usable for the batch's other items.
            with transaction.atomic():
                state = lms_boundary.block_state(self.user, item.usage_key)
        except Exception as error:  # the LMS raises anything; the answer waits for a later try
            return item_result.retry(f"the LMS could not read the problem's state: {error}", self.retry_after)
        refusal = self.closed(item, state) or self.superseded(item, state) or self.exhausted(state)
        return refusal or self.check(item)

    def malformed(self, item):
        if item.usage_key is None or item.usage_key.block_type != PROBLEM_TYPE:
            return item_result.refused(Reason.INVALID, "a submission needs the usage_id of a problem")
        answers = item.fields.get("answers")
        if not isinstance(answers, dict) or not answers or not all(_is_answer(value) for value in answers.values()):
            return item_result.refused(Reason.INVALID, "answers must map each input's name to a string or a list of strings")
        if not isinstance(item.fields.get("version"), str):
            return item_result.refused(Reason.INVALID, "version must be the block's content_hash from the manifest")
        return None

    def outdated(self, item):
        """The problem changed since the device downloaded it: the answer was to other content."""
        current = current_version(self.course_key, item.usage_id)
        if current is None or current["version"] == item.fields["version"]:
            return None
        return item_result.refused(Reason.CONTENT_CHANGED, "the problem changed after it was downloaded",
                                   current_version=current["version"])

    def closed(self, item, state):
        """Past the due date: refused when answered after it; kept for the course team when
        answered before it and sent within the grace window (the LMS grades no closed problem)."""
        if state.due is None or self.received_at <= state.due:
            return None
        if item.occurred_at > state.due:
            return item_result.refused(Reason.PAST_DUE, "answered after the due date")
        if self.received_at > state.due + timedelta(seconds=setting("LATE_SYNC_GRACE_SECONDS")):
            return item_result.refused(Reason.PAST_DUE, "answered before the due date but sent too long after it")
        return item_result.accepted(held="late_sync",
                                    message="answered before the due date, sent after it: kept for the course team")

    def superseded(self, item, state):
        """The learner answered on the web after answering here: the later, online answer stands."""
        online = self.online_submission_time(item, state)
        if online is None or online <= item.occurred_at:
            return None
        return item_result.refused(Reason.ANSWERED_ONLINE_LATER, "the problem was answered online after this answer")

    def online_submission_time(self, item, state):
        # The LMS's last submission time counts as online only when it is later than this
        # plugin's own last grading of the block (which also sets it).
        if state.last_submitted_at is None:
            return None
        ours = SyncedItem.objects.filter(user=self.user, kind=SyncedItem.SUBMISSION, usage_id=item.usage_id).aggregate(
            latest=Max("processed_at"))["latest"]
        return None if ours is not None and state.last_submitted_at <= ours else state.last_submitted_at

    def exhausted(self, state):
        if state.max_attempts is not None and state.attempts >= state.max_attempts:
            return item_result.refused(Reason.NO_ATTEMPTS_LEFT, f"all {state.max_attempts} attempts are used")
        return None

    def check(self, item):
        try:
            with transaction.atomic():  # a savepoint, as above
                response = lms_boundary.post_problem_check(self.user, item.usage_key, item.fields["answers"])
        except Exception as error:  # the LMS raises anything; the answer waits for a later try
            return item_result.retry(f"the LMS could not check the answer: {error}", self.retry_after)
        return read_problem_check(response, self.retry_after)


def _is_answer(value):
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(part, str) for part in value))
