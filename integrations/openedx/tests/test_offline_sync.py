"""The LMS side of offline sync through Django's test client: the real URLs (mounted by the
plugin framework), the LMS's real authentication classes (edx-drf-extensions, DRF), the real
models; only the functions of coursepack_openedx.lms_boundary are replaced, by FakeLms."""

import hashlib
import inspect
import json
import time
from datetime import datetime, timedelta, timezone

import jwt
from jwt.api_jwk import PyJWK
import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from coursepack_openedx import lms_boundary
from coursepack_openedx.lms_boundary import BlockState, LmsResponse
from coursepack_openedx.models import PublishedBlock, SyncedItem
from coursepack_openedx.published_blocks import record_published_blocks

COURSE = "course-v1:OpenedX+DemoX+DemoCourse"
BASE = f"/api/coursepack/v1/courses/{COURSE}"
P1 = "block-v1:OpenedX+DemoX+DemoCourse+type@problem+block@p1"
P2 = "block-v1:OpenedX+DemoX+DemoCourse+type@problem+block@p2"
HTML = "block-v1:OpenedX+DemoX+DemoCourse+type@html+block@h1"
OTHER_COURSE_PROBLEM = "block-v1:Other+X+Run+type@problem+block@p1"
CLOSED_MESSAGE = "The state of this problem has changed since you loaded this page. Please refresh your page."


def correct(score=1, possible=1, attempts=1):
    return LmsResponse(200, {"success": "correct" if score == possible else "incorrect", "contents": "<p>Right!</p>",
                             "current_score": score, "total_possible": possible, "attempts_used": attempts})


class FakeLms:
    """Stands in for the LMS at lms_boundary: answers what the test sets, records every call,
    and counts attempts and submission times the way problem_check does."""

    def __init__(self):
        self.enrolled = True
        self.states = {}
        self.responses = {}
        self.checks = []
        self.events = []
        self.event_failures = []

    def has_course_access(self, user, course_key):
        return self.enrolled

    def block_state(self, user, usage_key):
        return self.states.get(str(usage_key), BlockState())

    def post_problem_check(self, user, usage_key, answers):
        self.checks.append((str(usage_key), answers))
        queued = self.responses.get(str(usage_key), [])
        response = queued.pop(0) if queued else correct()
        if isinstance(response, Exception):
            raise response
        if response.status == 200 and response.body.get("success") in ("correct", "incorrect"):
            state = self.block_state(user, usage_key)
            self.states[str(usage_key)] = BlockState(state.attempts + 1, state.max_attempts, state.due,
                                                     datetime.now(timezone.utc))
        return response

    def emit_event(self, user, course_key, name, data, context):
        if self.event_failures:
            raise self.event_failures.pop(0)
        self.events.append((name, data, context))


@pytest.fixture
def lms(monkeypatch):
    fake = FakeLms()
    for name, function in inspect.getmembers(lms_boundary, inspect.isfunction):
        if function.__module__ == lms_boundary.__name__ and not name.startswith("_"):
            monkeypatch.setattr(lms_boundary, name, getattr(fake, name))
    return fake


@pytest.fixture
def learner(db, settings):
    cache.clear()
    settings.COURSEPACK = {"AUTHENTICATION_CLASSES": [
        "edx_rest_framework_extensions.auth.jwt.authentication.JwtAuthentication",
        "edx_rest_framework_extensions.auth.session.authentication.SessionAuthenticationAllowInactiveUser",
    ]}
    return User.objects.create_user("ada", "ada@example.org", "pw")


def token(user, lifetime=600, key=None):
    """A JWT as the LMS issues one, signed with its private key (or with `key`, a forgery)."""
    from django.conf import settings

    issuer = {"iss": "http://lms.test/oauth2", "aud": "lms-test"}
    now = int(time.time())
    payload = {**issuer, "preferred_username": user.username, "email": user.email, "iat": now, "exp": now + lifetime,
               "version": "1.1.0", "filters": [], "is_restricted": False, "scopes": ["read", "write"]}
    signing_key = key or PyJWK.from_json(settings.JWT_AUTH["JWT_PRIVATE_SIGNING_JWK"]).key
    return jwt.encode(payload, signing_key, algorithm="RS512")


def forged_key():
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def iso(moment):
    return moment.isoformat().replace("+00:00", "Z")


def now():
    return datetime.now(timezone.utc)


def post(user, endpoint, body, client=None, raw=None, **headers):
    client = client or Client()
    if user is not None:
        headers.setdefault("HTTP_AUTHORIZATION", f"JWT {token(user)}")
    data = raw if raw is not None else json.dumps(body)
    return client.post(f"{BASE}/{endpoint}", data=data, content_type="application/json", **headers)


def answer(item_id, usage_id=P1, at=None, version="v1", answers=None):
    return {"id": item_id, "usage_id": usage_id, "timestamp": iso(at or now() - timedelta(minutes=5)),
            "version": version, "answers": answers or {"input_p1_2_1": "choice_1"}}


def submit(user, items, sent_at=None, **kwargs):
    response = post(user, "submissions", {"sent_at": iso(sent_at or now()), "items": items}, **kwargs)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def by_id(results):
    return {result["id"]: result for result in results}


# Registration and authentication

def test_the_plugin_is_registered_for_the_lms_with_its_urls():
    from importlib.metadata import entry_points

    from django.urls import reverse

    names = [e.value for e in entry_points(group="lms.djangoapp") if e.name == "coursepack"]
    assert names == ["coursepack_openedx.apps:CoursepackConfig"], "scripts/ensure-deps.sh --test reinstalls the plugin"
    assert reverse("coursepack:submissions", kwargs={"course_id": COURSE}) == f"{BASE}/submissions"
    assert reverse("coursepack:events", kwargs={"course_id": COURSE}) == f"{BASE}/events"
    assert reverse("coursepack:block-versions", kwargs={"course_id": COURSE}) == f"{BASE}/block-versions"


@pytest.mark.parametrize("endpoint", ["submissions", "events", "block-versions"])
def test_no_credentials_or_a_bad_token_is_401(learner, lms, endpoint):
    body = {"sent_at": iso(now()), "items": [answer("a")], "versions": {}}
    anonymous = post(None, endpoint, body)
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == 'JWT realm="api"'
    forged = post(None, endpoint, body, HTTP_AUTHORIZATION=f"JWT {token(learner, key=forged_key())}")
    expired = post(None, endpoint, body, HTTP_AUTHORIZATION=f"JWT {token(learner, lifetime=-60)}")
    assert (forged.status_code, expired.status_code) == (401, 401)
    assert lms.checks == [] and not SyncedItem.objects.exists()


def test_a_browser_session_needs_the_csrf_token(learner, lms):
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    body = {"sent_at": iso(now()), "items": [answer("a")]}
    refused = post(None, "submissions", body, client=client)
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert lms.checks == []
    client.get("/admin/login/")  # any page that sets the csrftoken cookie
    csrf = client.cookies["csrftoken"].value
    assert post(None, "submissions", body, client=client, HTTP_X_CSRFTOKEN=csrf).status_code == 200
    assert len(lms.checks) == 1


def test_a_learner_without_access_to_the_course_gets_403_for_the_whole_batch(learner, lms):
    lms.enrolled = False
    response = post(learner, "submissions", {"sent_at": iso(now()), "items": [answer("a")]})
    assert response.status_code == 403 and response.json()["error"] == "not_enrolled"
    assert lms.checks == [] and not SyncedItem.objects.exists()


def test_an_lms_that_cannot_check_access_answers_503_with_retry_after(learner, lms, monkeypatch):
    def unavailable(user, course_key):
        raise ConnectionError("database gone")

    monkeypatch.setattr(lms_boundary, "has_course_access", unavailable)
    response = post(learner, "submissions", {"sent_at": iso(now()), "items": [answer("a")]})
    assert (response.status_code, response.json()["error"], response["Retry-After"]) == (503, "lms_unavailable", "60")
    assert lms.checks == [] and not SyncedItem.objects.exists()


# One result per item

def test_a_graded_answer_carries_correctness_score_attempts_and_feedback(learner, lms):
    lms.responses[P2] = [correct(score=1, possible=2, attempts=2)]
    results = by_id(submit(learner, [answer("a"), answer("b", usage_id=P2)]))
    assert results["a"] == {"id": "a", "status": "graded", "correctness": "correct", "feedback_html": "<p>Right!</p>",
                            "score": {"earned": 1, "possible": 1}, "attempts_used": 1}
    assert results["b"]["correctness"] == "partially-correct" and results["b"]["score"] == {"earned": 1, "possible": 2}
    assert lms.checks == [(P1, {"input_p1_2_1": "choice_1"}), (P2, {"input_p1_2_1": "choice_1"})]


def test_a_refusal_that_problem_check_answers_with_http_200_is_refused_not_graded(learner, lms):
    lms.responses[P1] = [LmsResponse(200, {"success": CLOSED_MESSAGE})]
    [result] = submit(learner, [answer("a")])
    assert result == {"id": "a", "status": "refused", "reason": "lms_refused", "message": CLOSED_MESSAGE}


def test_an_answer_queued_for_an_external_grader_is_accepted(learner, lms):
    lms.responses[P1] = [LmsResponse(200, {"success": "submitted", "contents": "<p>queued</p>"})]
    [result] = submit(learner, [answer("a")])
    assert result["status"] == "accepted"


def test_an_lms_error_is_retry_kept_nowhere_and_runs_again_when_resent(learner, lms):
    lms.responses[P1] = [LmsResponse(502, {}), RuntimeError("modulestore down")]
    items = [answer("a")]
    first, second, third = submit(learner, items), submit(learner, items), submit(learner, items)
    assert [r[0]["status"] for r in (first, second, third)] == ["retry", "retry", "graded"]
    assert first[0]["retry_after"] == 60 and "HTTP 502" in first[0]["message"]
    assert "modulestore down" in second[0]["message"]
    assert len(lms.checks) == 3 and SyncedItem.objects.count() == 1


def test_a_problem_state_the_lms_cannot_read_is_retry(learner, lms, monkeypatch):
    def unreadable(user, usage_key):
        raise RuntimeError("StudentModule locked")

    monkeypatch.setattr(lms_boundary, "block_state", unreadable)
    [result] = submit(learner, [answer("a")])
    assert result["status"] == "retry" and "StudentModule locked" in result["message"]
    assert lms.checks == [] and not SyncedItem.objects.exists()


def test_a_database_error_in_the_lms_handler_leaves_the_other_items_processed(learner, lms, monkeypatch):
    grade = lms.post_problem_check

    def writes_then_fails(user, usage_key, answers):
        if str(usage_key) == P1:
            User.objects.create(username=user.username)  # a unique username: the database refuses it
            raise AssertionError("unreachable")
        return grade(user, usage_key, answers)

    monkeypatch.setattr(lms_boundary, "post_problem_check", writes_then_fails)
    start = now() - timedelta(hours=1)
    results = submit(learner, [answer("a", at=start), answer("b", usage_id=P2, at=start + timedelta(minutes=1))])
    assert [r["status"] for r in results] == ["retry", "graded"]
    assert "UNIQUE constraint failed" in results[0]["message"]
    assert list(SyncedItem.objects.values_list("item_id", flat=True)) == ["b"]


def test_a_retry_holds_back_the_later_items_of_its_block_only(learner, lms):
    lms.responses[P1] = [LmsResponse(503, {})]
    start = now() - timedelta(hours=1)
    results = by_id(submit(learner, [answer("p1-first", at=start), answer("p1-later", at=start + timedelta(minutes=1)),
                                     answer("p2", usage_id=P2, at=start + timedelta(minutes=2))]))
    assert [results[i]["status"] for i in ("p1-first", "p1-later", "p2")] == ["retry", "retry", "graded"]
    assert "earlier item" in results["p1-later"]["message"]
    assert [usage for usage, _ in lms.checks] == [P1, P2]


# Idempotency and order

def test_a_resent_item_gets_its_first_result_and_the_handler_does_not_run_again(learner, lms):
    item = answer("a")
    first = submit(learner, [item])
    lms.responses[P1] = [LmsResponse(200, {"success": CLOSED_MESSAGE})]  # would differ if run again
    second = submit(learner, [item])
    assert first == second and len(lms.checks) == 1
    # The same id with other content is a client error, not a repeat.
    [reused] = submit(learner, [dict(item, answers={"input_p1_2_1": "choice_2"})])
    assert (reused["status"], reused["reason"]) == ("refused", "invalid") and len(lms.checks) == 1


def test_duplicates_in_one_batch_run_once_and_each_gets_the_result(learner, lms):
    item = answer("a")
    results = submit(learner, [item, item, dict(item, answers={"input_p1_2_1": "other"})])
    assert results[0] == results[1] and results[0]["status"] == "graded"
    assert results[2]["reason"] == "invalid"
    assert len(lms.checks) == 1


def test_items_run_in_learner_time_order_per_block_and_results_keep_request_order(learner, lms):
    start = now() - timedelta(hours=2)
    items = [answer("p1-third", at=start + timedelta(minutes=3), answers={"x": "3"}),
             answer("p2-second", usage_id=P2, at=start + timedelta(minutes=2), answers={"x": "2"}),
             answer("p1-first", at=start + timedelta(minutes=1), answers={"x": "1"}),
             answer("p1-second", at=start + timedelta(minutes=2, seconds=30), answers={"x": "2.5"})]
    results = submit(learner, items)
    assert [r["id"] for r in results] == ["p1-third", "p2-second", "p1-first", "p1-second"]
    assert [(usage, answers["x"]) for usage, answers in lms.checks] == [(P1, "1"), (P2, "2"), (P1, "2.5"), (P1, "3")]
    assert all(r["status"] == "graded" for r in results)


def test_a_second_batch_of_the_same_learner_and_course_waits_for_the_first(learner, lms):
    cache.add(f"coursepack:batch:{learner.pk}:{COURSE}", 1)
    response = post(learner, "submissions", {"sent_at": iso(now()), "items": [answer("a")]})
    assert response.status_code == 409 and response.json()["error"] == "batch_in_progress"
    assert lms.checks == []


# Conflict rules

def test_the_device_clock_is_corrected_by_the_offset_of_its_sent_at(learner, lms):
    due = now() - timedelta(hours=1)
    lms.states[P1] = BlockState(due=due)
    skew = timedelta(days=2)  # the device's clock is two days behind
    # Answered 30 minutes ago by the real clock: after the due date, though the device says days before.
    [result] = submit(learner, [answer("a", at=now() - skew - timedelta(minutes=30))], sent_at=now() - skew)
    assert (result["status"], result["reason"]) == ("refused", "past_due")
    item = SyncedItem.objects.get()
    assert abs((item.occurred_at - (now() - timedelta(minutes=30))).total_seconds()) < 5


def test_past_due_answers_refused_and_an_answer_made_in_time_but_sent_late_kept_within_the_grace_window(learner, lms, settings):
    due = now() - timedelta(days=1)
    lms.states[P1] = BlockState(due=due)
    results = by_id(submit(learner, [answer("after-due", at=due + timedelta(minutes=5)),
                                     answer("before-due", at=due - timedelta(minutes=5))]))
    assert (results["after-due"]["status"], results["after-due"]["reason"]) == ("refused", "past_due")
    assert results["before-due"]["status"] == "accepted" and results["before-due"]["held"] == "late_sync"
    assert SyncedItem.objects.get(item_id="before-due").payload["answers"] == {"input_p1_2_1": "choice_1"}
    settings.COURSEPACK = {**settings.COURSEPACK, "LATE_SYNC_GRACE_SECONDS": 3600}
    [late] = submit(learner, [answer("too-late", at=due - timedelta(minutes=5))])
    assert (late["status"], late["reason"]) == ("refused", "past_due")
    assert lms.checks == []  # the LMS grades no closed problem; none was sent to it


def test_an_answer_made_before_the_due_date_and_sent_before_it_is_graded(learner, lms):
    lms.states[P1] = BlockState(due=now() + timedelta(hours=1))
    [result] = submit(learner, [answer("a")])
    assert result["status"] == "graded"


def test_a_block_changed_since_download_is_refused_with_its_new_version(learner, lms):
    PublishedBlock.objects.create(course_id=COURSE, usage_id=P1, content_hash="v2", last_modified="2026-11-25T10:00:00Z")
    results = by_id(submit(learner, [answer("old", version="v1"), answer("current", version="v2"),
                                     answer("unrecorded", usage_id=P2, version="anything")]))
    assert results["old"] == {"id": "old", "status": "refused", "reason": "content_changed",
                              "message": "the problem changed after it was downloaded", "current_version": "v2"}
    assert results["current"]["status"] == "graded" and results["unrecorded"]["status"] == "graded"
    assert [usage for usage, _ in lms.checks] == [P1, P2]


def test_an_answer_given_online_after_the_offline_one_wins(learner, lms):
    offline_at = now() - timedelta(hours=3)
    lms.states[P1] = BlockState(attempts=1, last_submitted_at=offline_at + timedelta(hours=1))
    lms.states[P2] = BlockState(attempts=1, last_submitted_at=offline_at - timedelta(hours=1))
    results = by_id(submit(learner, [answer("superseded", at=offline_at), answer("next-attempt", usage_id=P2, at=offline_at)]))
    assert (results["superseded"]["status"], results["superseded"]["reason"]) == ("refused", "answered_online_later")
    assert results["next-attempt"]["status"] == "graded"
    assert [usage for usage, _ in lms.checks] == [P2]


def test_the_plugins_own_grading_is_not_taken_for_an_online_answer(learner, lms):
    start = now() - timedelta(hours=1)
    results = submit(learner, [answer("first", at=start), answer("second", at=start + timedelta(minutes=1))])
    assert [r["status"] for r in results] == ["graded", "graded"]
    # A later batch with an answer made before the plugin graded the others is still not "online".
    [third] = submit(learner, [answer("third", at=start + timedelta(minutes=2))])
    assert third["status"] == "graded" and len(lms.checks) == 3


def test_no_attempts_left(learner, lms):
    lms.states[P1] = BlockState(attempts=3, max_attempts=3)
    [result] = submit(learner, [answer("a")])
    assert (result["status"], result["reason"]) == ("refused", "no_attempts_left") and lms.checks == []


def test_malformed_items_are_refused_invalid_and_the_others_still_run(learner, lms):
    sent_at = now()
    items = [answer("other-course", usage_id=OTHER_COURSE_PROBLEM), answer("not-a-problem", usage_id=HTML),
             answer("no-answers", answers={"x": 1}), dict(answer("no-time"), timestamp="yesterday"),
             answer("future", at=sent_at + timedelta(minutes=5)), {"usage_id": P1}, "text",
             dict(answer("no-version"), version=None), answer("fine", usage_id=P2)]
    results = submit(learner, items, sent_at=sent_at)
    assert [r["status"] for r in results] == ["refused"] * 8 + ["graded"]
    assert {r["reason"] for r in results[:8]} == {"invalid"}
    assert [usage for usage, _ in lms.checks] == [P2]


# Bounds and malformed requests

def test_bounds_and_malformed_batches(learner, lms, settings):
    settings.COURSEPACK = {**settings.COURSEPACK, "MAX_BATCH_ITEMS": 2, "MAX_BATCH_BYTES": 2000}
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    too_many = post(learner, "submissions", {"sent_at": iso(now()), "items": [answer(str(n)) for n in range(3)]})
    assert (too_many.status_code, too_many.json()["error"]) == (413, "too_many_items")
    big = post(learner, "submissions", {"sent_at": iso(now()), "items": [answer("a", answers={"x": "y" * 3000})]})
    assert (big.status_code, big.json()["error"]) == (413, "too_large")
    # A limit set above Django's own: Django's refusal is a 413 as well.
    settings.COURSEPACK = {**settings.COURSEPACK, "MAX_BATCH_BYTES": 1_000_000}
    huge = post(learner, "submissions", {"sent_at": iso(now()), "items": [answer("a", answers={"x": "y" * 200_000})]})
    assert (huge.status_code, huge.json()["error"]) == (413, "too_large")
    settings.COURSEPACK = {**settings.COURSEPACK, "MAX_BATCH_BYTES": 2000}
    assert post(learner, "submissions", None, raw="{not json").status_code == 400
    assert post(learner, "submissions", {"items": []}).json()["error"] == "invalid"
    assert post(learner, "submissions", {"sent_at": "2026-11-25T10:00:00", "items": []}).status_code == 400
    assert Client().post("/api/coursepack/v1/courses/not-a-course/submissions", data="{}", content_type="application/json",
                         HTTP_AUTHORIZATION=f"JWT {token(learner)}").status_code == 400
    assert lms.checks == []


# Events

def test_events_go_to_the_tracking_log_with_their_learner_time_once(learner, lms):
    sent_at = now() - timedelta(hours=1)  # the device's clock is an hour behind
    played = {"id": "e1", "name": "play_video", "usage_id": HTML, "timestamp": iso(sent_at - timedelta(minutes=10)),
              "data": {"currentTime": 12.5}}
    body = {"sent_at": iso(sent_at), "items": [played, dict(played, id="e2", name="rm -rf")]}
    response = post(learner, "events", body)
    assert response.status_code == 200 and abs(response.json()["clock_offset_seconds"] - 3600) < 5
    results = response.json()["results"]
    assert results[0] == {"id": "e1", "status": "accepted"}
    assert (results[1]["status"], results[1]["reason"]) == ("refused", "invalid")
    [(name, data, context)] = lms.events
    assert (name, data) == ("play_video", {"currentTime": 12.5})
    logged = datetime.fromisoformat(context["offline"]["timestamp"])
    assert abs((logged - (now() - timedelta(minutes=10))).total_seconds()) < 5
    assert context["offline"]["usage_id"] == HTML and context["offline"]["item_id"] == "e1"
    assert post(learner, "events", body).json()["results"] == results and len(lms.events) == 1


def test_an_event_the_tracking_log_could_not_take_is_retried(learner, lms):
    lms.event_failures = [OSError("tracking backend down")]
    paused = {"id": "e1", "name": "pause_video", "timestamp": iso(now()), "data": {}}
    # Sent twice in the batch: the copy gets the first one's retry, it does not run on its own.
    first = post(learner, "events", {"sent_at": iso(now()), "items": [paused, paused]}).json()["results"]
    assert [r["status"] for r in first] == ["retry", "retry"] and "tracking backend down" in first[1]["message"]
    assert lms.events == []
    second = post(learner, "events", {"sent_at": iso(now()), "items": [paused]}).json()["results"][0]
    assert second["status"] == "accepted" and len(lms.events) == 1


# Block versions

def test_block_versions_tell_a_device_what_is_outdated_and_what_is_gone(learner, lms):
    unpublished = post(learner, "block-versions", {"versions": {P1: "v1"}}).json()
    assert unpublished == {"published": False, "outdated": {}, "removed": []}
    PublishedBlock.objects.create(course_id=COURSE, usage_id=P1, content_hash="v2", last_modified="2026-11-25T10:00:00Z")
    PublishedBlock.objects.create(course_id=COURSE, usage_id=P2, content_hash="w1")
    response = post(learner, "block-versions", {"versions": {P1: "v1", P2: "w1", HTML: "h1"}})
    assert response.json() == {"published": True, "removed": [HTML],
                               "outdated": {P1: {"current_version": "v2", "last_modified": "2026-11-25T10:00:00Z"}}}
    assert post(learner, "block-versions", {"versions": [P1]}).status_code == 400


def test_published_block_versions_are_recorded_from_the_manifest(db, tmp_path):
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"schema_version": 2, "course_id": COURSE, "blocks": [
        {"usage_id": P1, "type": "problem", "content_hash": "abc", "last_modified": "2026-11-25T10:00:00Z"},
        {"usage_id": "block-v1:OpenedX+DemoX+DemoCourse+type@lti+block@l", "type": "lti", "offline": False},
    ]}))
    PublishedBlock.objects.create(course_id=COURSE, usage_id=P2, content_hash="gone")
    assert record_published_blocks(COURSE, str(manifest)) == 1
    assert list(PublishedBlock.objects.values_list("usage_id", "content_hash")) == [(P1, "abc")]
    manifest.write_text("[]")
    with pytest.raises(ValueError):
        record_published_blocks(COURSE, str(manifest))


def write_split_publish(folder, blocks_per_part):
    """A publish in the split form: manifest/<sha256>.json parts and manifest-index.json naming
    them (no manifest.json, as for a course too large for it). Returns the parts' paths."""
    (folder / "manifest").mkdir(parents=True)
    references, paths = [], []
    for blocks in blocks_per_part:
        data = json.dumps({"blocks": blocks, "files": {}, "outline": []}).encode()
        sha256 = hashlib.sha256(data).hexdigest()
        (folder / "manifest" / (sha256 + ".json")).write_bytes(data)
        references.append({"sha256": sha256, "size": len(data), "blocks": len(blocks), "containers": 0})
        paths.append(folder / "manifest" / (sha256 + ".json"))
    (folder / "manifest-index.json").write_text(json.dumps({
        "schema_version": 3, "course_id": COURSE, "published_at": "2026-11-25T10:00:00Z", "generator": "test", "parts": references}))
    return paths


def test_block_versions_are_recorded_from_a_split_manifest_each_part_checked(db, tmp_path):
    paths = write_split_publish(tmp_path, [
        [{"usage_id": P1, "type": "problem", "content_hash": "abc"}],
        [{"usage_id": P2, "type": "problem", "content_hash": "def"}, {"usage_id": HTML, "type": "html", "offline": False}],
    ])
    assert record_published_blocks(COURSE, str(tmp_path / "manifest.json")) == 2
    assert sorted(PublishedBlock.objects.values_list("usage_id", "content_hash")) == sorted([(P1, "abc"), (P2, "def")])
    # A part that is not what the index names is refused, and the recorded versions stay.
    paths[1].write_bytes(paths[1].read_bytes().replace(b"def", b"xyz"))
    with pytest.raises(ValueError, match="does not match its hash"):
        record_published_blocks(COURSE, str(tmp_path / "manifest.json"))
    assert PublishedBlock.objects.filter(course_id=COURSE).count() == 2
    index = json.loads((tmp_path / "manifest-index.json").read_text())
    index["parts"][0]["sha256"] = "../../etc/passwd"
    (tmp_path / "manifest-index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match="not a sha256"):
        record_published_blocks(COURSE, str(tmp_path / "manifest.json"))
