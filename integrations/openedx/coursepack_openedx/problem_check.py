"""Reads problem_check's answer the way the LMS's own problem JavaScript (capa's display.js)
does: only `success` equal to "correct", "incorrect" (or "submitted", queued for an external
grader) is a grade. Any other `success` is the LMS refusing the answer with HTTP 200 — a
closed or past-due problem comes back as {"success": "The state of this problem has changed
since you loaded this page…"} — and the page shows that message instead of a grade."""

from . import item_result

GRADED = ("correct", "incorrect")
QUEUED = "submitted"


def read_problem_check(response, retry_after):
    if response.status >= 500 or response.status == 429:
        return item_result.retry(f"the LMS answered HTTP {response.status}", retry_after)
    if response.status == 404:
        return item_result.refused(item_result.Reason.INVALID, "the LMS has no such problem for this learner")
    if response.status != 200:
        return item_result.refused(item_result.Reason.LMS_REFUSED, f"the LMS answered HTTP {response.status}")
    success = response.body.get("success")
    if success in GRADED:
        return _grade(response.body, success)
    if success == QUEUED:
        return item_result.accepted(message="queued for the course's external grader")
    if isinstance(success, str) and success:
        return item_result.refused(item_result.Reason.LMS_REFUSED, success)
    return item_result.refused(item_result.Reason.LMS_REFUSED, "the LMS answered without a result")


def _grade(body, success):
    earned, possible = body.get("current_score"), body.get("total_possible")
    score = None
    correctness = success
    if isinstance(earned, (int, float)) and isinstance(possible, (int, float)) and possible > 0:
        score = {"earned": earned, "possible": possible}
        # An answer partly right comes back as "incorrect"; its score tells the difference.
        if success == "incorrect" and 0 < earned < possible:
            correctness = "partially-correct"
    attempts = body.get("attempts_used")
    contents = body.get("contents")
    return item_result.graded(correctness, contents if isinstance(contents, str) else "", score,
                              attempts if isinstance(attempts, int) else None)
