"""Browser tests for issue 32: once the LMS (a fake one, Tests/fixtures/fake_lms.py, with the
plugin's batch endpoint) has answered, a problem's offline page shows the learner's answer and
its result, from file:// and from `coursepack serve`, in real Chromium with the network off;
reset shows the blank problem; a refusal shows its message; an unsent answer shows "waiting"."""

import json
import os
import select
import subprocess
import sys
import time

from urllib.parse import quote

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import pagecheck  # noqa: E402
from test_pages import EXAMPLE, ROOT, coursepack  # noqa: E402

FAKE_LMS = os.path.join(ROOT, "Tests", "fixtures", "fake_lms.py")
TOKEN = "browser-test-token"
QUIZ = "block-v1:CoursepackX+CP101+2026+type@problem+block@offline_quiz"
RADIO = "input_offline_quiz_2_1"
PAGE = os.path.join("problem", "offline_quiz", "index.html")
# Hostile on purpose: the device cleans it, the page cleans it again; nothing of it may run.
FEEDBACK = ('<div class="fb" onclick="window.__pwned = 1"><p>Well done: <b>Lion</b> it is.</p>'
            '<img src="x" alt="a lion" onerror="window.__pwned = 2"><a href="javascript:window.__pwned = 3">more</a>'
            '<script>window.__pwned = 4</script><style>form { display: none }</style>'
            '<input name="input_offline_quiz_2_1" value="choice_0" checked></div>')


def run(*arguments, stdin=None):
    done = subprocess.run([coursepack(), *arguments], input=stdin, capture_output=True, text=True)
    return done


@pytest.fixture
def device(tmp_path):
    """The example course built, synced into a device folder, a token file and a fake LMS."""
    published, target = str(tmp_path / "published"), str(tmp_path / "device")
    assert run("build", EXAMPLE, "--out", published).returncode == 0
    assert run("sync", published, "--to", target).returncode == 0
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    os.chmod(token, 0o600)
    lms = tmp_path / "lms"
    lms.mkdir()
    process = subprocess.Popen([sys.executable, FAKE_LMS, EXAMPLE, str(lms / "port"), str(lms / "log"), str(lms / "faults"), TOKEN])
    for _ in range(100):
        if (lms / "port").exists():
            break
        time.sleep(0.05)
    assert (lms / "port").exists(), "the fake LMS did not start"
    url = "http://127.0.0.1:" + (lms / "port").read_text()
    course = os.path.join(target, "CoursepackX+CP101+2026")

    def script(results):
        (lms / "faults").write_text(json.dumps({"batch": {"items": {QUIZ: results}}}))

    def answer(choice, second):
        body = {"usage_id": QUIZ, "timestamp": f"2026-11-23T09:00:{second:02d}.000Z", "fields": {RADIO: choice}}
        done = run("answers", target, "--add", "-", stdin=json.dumps(body))
        assert done.returncode == 0, done.stderr

    def submit():
        done = run("sync", published, "--to", target, "--submit", "--lms-url", url, "--lms-token-file", str(token))
        assert done.returncode == 0, done.stdout + done.stderr

    def batches():
        lines = (lms / "log").read_text().splitlines() if (lms / "log").exists() else []
        return [entry["batch"] for entry in map(json.loads, lines) if "batch" in entry]

    yield {"target": target, "course": course, "script": script, "answer": answer, "submit": submit, "batches": batches}
    process.terminate()
    process.wait(10)


def shown(driver):
    """What the page shows of the answer state: its box, verdict, feedback text, the radios."""
    return driver.execute_script("""
        var box = document.querySelector('.coursepack-state');
        var again = document.querySelector('.coursepack-show-answer');
        return { box: !box.hidden, verdict: document.querySelector('.coursepack-verdict').textContent,
                 feedback: document.querySelector('.coursepack-feedback').textContent,
                 again: !again.hidden,
                 radios: Array.prototype.map.call(document.querySelectorAll('form input[type=radio]'), function (r) { return r.checked; }),
                 pwned: window.__pwned === undefined ? null : window.__pwned,
                 errors: window.__coursepackErrors || [] };""")


def wait_for(driver, predicate, what):
    for _ in range(50):
        state = shown(driver)
        if predicate(state):
            return state
        time.sleep(0.1)
    raise AssertionError(f"{what}: the page shows {shown(driver)}")


def check_clean(driver, page, course):
    """The page with its state passes every check the other pages pass (no failed load, no
    script error), from wherever it was opened."""
    report = pagecheck.Report()
    manifest, pages = pagecheck.pages_of(course)
    block = next(b for p, b in pages if p == os.path.join(course, PAGE))
    pagecheck.check_page(driver, os.path.join(course, PAGE), block, course, report, served=page)
    assert report.failures() == [], "\n".join(map(str, report.failures()))


def test_waiting_then_graded_with_feedback_and_reset_from_file(device):
    device["script"]([{"status": "graded", "correctness": "correct", "score": {"earned": 1, "possible": 1},
                       "attempts_used": 1, "feedback_html": FEEDBACK}])
    device["answer"]("choice_1", 1)
    driver = pagecheck.start_browser()
    try:
        page = "file://" + os.path.join(device["course"], PAGE)
        driver.get(page)
        state = wait_for(driver, lambda s: s["box"], "an answer not sent yet")
        assert state["verdict"].startswith("Waiting to be sent") and state["radios"] == [False, True]

        device["submit"]()
        driver.get(page)
        state = wait_for(driver, lambda s: s["verdict"].startswith("Correct"), "the graded answer")
        assert state["verdict"] == "Correct (1/1 points), attempts used: 1"
        assert "Well done: Lion it is." in state["feedback"] and state["radios"] == [False, True]
        time.sleep(0.3)
        # The feedback's link and image are inert; its form control neither counts nor acts.
        driver.execute_script("document.querySelector('.coursepack-feedback a').click(); document.querySelector('.coursepack-feedback div').click();")
        assert shown(driver)["pwned"] is None
        assert driver.execute_script("return document.querySelector('.coursepack-feedback input').disabled") is True
        assert driver.execute_script("return document.querySelector('form.coursepack-problem').offsetHeight") > 0, "the feedback's style sheet was dropped"
        assert driver.execute_script("return document.querySelectorAll('.coursepack-feedback script, .coursepack-feedback style').length") == 0
        # Offline, an image of the LMS's shows its alt text: no broken load, no network request.
        assert driver.execute_script("return document.querySelector('.coursepack-feedback img').hasAttribute('src')") is False

        # Reset: the blank problem, remembered across a reload; the graded answer comes back on demand.
        driver.find_element("css selector", "button.coursepack-reset").click()
        state = shown(driver)
        assert not state["box"] and state["again"] and state["radios"] == [False, False]
        driver.get(page)
        state = wait_for(driver, lambda s: s["again"], "the reset, after a reload")
        assert not state["box"] and state["radios"] == [False, False]
        driver.find_element("css selector", "button.coursepack-show-answer").click()
        state = shown(driver)
        assert state["box"] and state["verdict"].startswith("Correct") and state["radios"] == [False, True]
        assert state["errors"] == []
        check_clean(driver, None, device["course"])
    finally:
        driver.quit()


def test_served_page_shows_the_grade_then_a_new_answer_waiting(device):
    device["script"]([{"status": "graded", "correctness": "incorrect", "score": {"earned": 0, "possible": 1},
                       "feedback_html": FEEDBACK}])
    device["answer"]("choice_0", 1)
    device["submit"]()
    server = subprocess.Popen([coursepack(), "serve", device["target"], "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 30)
        assert ready, "coursepack serve printed nothing in 30 s"
        served = server.stdout.readline().split()[-1] + quote(os.path.basename(device["course"])) + "/"
        driver = pagecheck.start_browser(loopback=True)
        try:
            driver.get(served + PAGE)
            state = wait_for(driver, lambda s: s["box"], "the graded answer, served")
            assert state["verdict"] == "Incorrect (0/1 points)" and "Well done" in state["feedback"]
            assert state["radios"] == [True, False] and state["pwned"] is None

            # A new answer on the served page is "waiting" once the page is opened again.
            driver.find_elements("css selector", "form input[type=radio]")[1].click()
            driver.find_element("css selector", "button.coursepack-submit").click()
            for _ in range(50):
                if "Submitted" in driver.find_element("css selector", ".coursepack-answer-status").text:
                    break
                time.sleep(0.1)
            assert not shown(driver)["box"], "the old grade is not shown for the new answer"
            driver.get(served + PAGE)
            state = wait_for(driver, lambda s: s["box"], "the new answer, waiting")
            assert state["verdict"].startswith("Waiting to be sent") and state["radios"] == [False, True]

            driver.find_element("css selector", "button.coursepack-reset").click()
            driver.get(served + PAGE)
            state = wait_for(driver, lambda s: s["again"], "the reset, served")
            assert state["radios"] == [False, False] and state["errors"] == []
            check_clean(driver, served, device["course"])
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(10)


def test_a_refusal_is_shown_and_not_sent_again(device):
    device["script"]([{"status": "refused", "reason": "past_due", "message": "answered after the due date"}])
    device["answer"]("choice_1", 1)
    device["submit"]()
    device["submit"]()
    assert len(device["batches"]()) == 1, "a refused answer is never sent again"
    driver = pagecheck.start_browser()
    try:
        driver.get("file://" + os.path.join(device["course"], PAGE))
        state = wait_for(driver, lambda s: s["box"], "the refusal")
        assert state["verdict"] == "Not graded: your answer reached the course after the due date."
        assert state["feedback"] == "" and state["radios"] == [False, True]
    finally:
        driver.quit()
