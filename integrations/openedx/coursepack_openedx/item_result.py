"""The one result each offline item gets, and the fixed list of reasons for a refusal."""

from dataclasses import dataclass, field

ACCEPTED = "accepted"
GRADED = "graded"
REFUSED = "refused"
RETRY = "retry"


class Reason:
    """Why an item was refused: definite, so the device shows it and does not send it again."""

    PAST_DUE = "past_due"
    CONTENT_CHANGED = "content_changed"
    NO_ATTEMPTS_LEFT = "no_attempts_left"
    ANSWERED_ONLINE_LATER = "answered_online_later"
    # The LMS's own handler refused the answer for a reason of its own (its message says which).
    LMS_REFUSED = "lms_refused"
    INVALID = "invalid"

    ALL = (PAST_DUE, CONTENT_CHANGED, NO_ATTEMPTS_LEFT, ANSWERED_ONLINE_LATER, LMS_REFUSED, INVALID)


@dataclass(frozen=True)
class ItemResult:
    status: str
    # Everything else the result carries (reason, message, correctness, …), as sent in JSON.
    details: dict = field(default_factory=dict)

    @property
    def is_final(self):
        """A final result is kept and answered again to a resend; a retry is not."""
        return self.status != RETRY

    def as_json(self, item_id):
        return {"id": item_id, "status": self.status, **self.details}


def accepted(**details):
    return ItemResult(ACCEPTED, details)


def graded(correctness, feedback_html, score=None, attempts_used=None):
    details = {"correctness": correctness, "feedback_html": feedback_html}
    if score is not None:
        details["score"] = score
    if attempts_used is not None:
        details["attempts_used"] = attempts_used
    return ItemResult(GRADED, details)


def refused(reason, message, **details):
    assert reason in Reason.ALL, reason
    return ItemResult(REFUSED, {"reason": reason, "message": message, **details})


def retry(message, retry_after):
    return ItemResult(RETRY, {"message": message, "retry_after": retry_after})
