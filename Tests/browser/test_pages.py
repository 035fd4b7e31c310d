"""Browser tests: the unpacked pages of real courses, opened in headless Chromium with the
network off, must work as a learner expects (see pagecheck.py for what is checked), and every
check must catch a page made to break it."""

import json
import os
import shutil
import subprocess
import sys
import time

from html.parser import HTMLParser
from urllib.parse import quote, unquote

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import pagecheck  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO = os.path.join(ROOT, "..", "shared", "corpus", "openedx-demo-course", "course")
EXAMPLE = os.path.join(ROOT, "examples", "coursepack-101")
SCREENSHOTS = os.path.join(ROOT, "out", "screenshots")


def coursepack():
    binary = os.environ.get("COURSEPACK") or os.path.join(ROOT, ".build", "debug", "coursepack")
    if not os.path.exists(binary):
        pytest.fail(f"{binary} is missing: run `swift build` first (make test does)")
    return binary


@pytest.fixture(scope="session")
def browser():
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.fail("the Python package selenium is needed (pip install selenium; make test installs it)")
    driver = pagecheck.start_browser()
    yield driver
    driver.quit()


def build_and_sync(course, tmp_path_factory, name):
    work = tmp_path_factory.mktemp(name)
    out, target = str(work / "published"), str(work / "device")
    built = subprocess.run([coursepack(), "build", course, "--out", out], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    synced = subprocess.run([coursepack(), "sync", out, "--to", target], capture_output=True, text=True)
    assert synced.returncode == 0, synced.stderr
    return course_folder(target)


def course_folder(target):
    """A target holds one folder per course (TARGET/<course>/manifest.json); the one course."""
    folders = [name for name in os.listdir(target) if os.path.isfile(os.path.join(target, name, "manifest.json"))]
    assert len(folders) == 1, folders
    return os.path.join(target, folders[0])


@pytest.fixture(scope="session")
def demo_target(tmp_path_factory):
    return build_and_sync(DEMO, tmp_path_factory, "demo")


def test_demo_course_pages_work_offline(browser, demo_target):
    report = pagecheck.check_target(demo_target, driver=browser)
    print(json.dumps({"pages": report.pages, "counts": report.counts()}))
    assert report.pages >= 250
    assert report.failures() == [], "\n".join(map(str, report.failures()[:40]))
    # Pages whose course script needs the LMS page say so in the manifest; keep that honest.
    _, pages = pagecheck.pages_of(demo_target)
    declared = {os.path.relpath(p, demo_target) for p, b in pages if any(i.startswith("lms:") for i in b.get("requires_network", []))}
    assert {f.page for f in report.of_kind("declared-lms-script-error")} <= declared


def test_example_course_pages_work_offline(browser, tmp_path_factory):
    target = build_and_sync(EXAMPLE, tmp_path_factory, "example")
    report = pagecheck.check_target(target, driver=browser)
    assert report.pages >= 4
    assert report.failures() == [], "\n".join(map(str, report.failures()))
    # The local video's captions are in the page and load from file://.
    video = os.path.join(target, "video", "lecture_video", "index.html")
    browser.get("file://" + video)
    cues = browser.execute_script(
        "var v = document.querySelector('video'); return Array.prototype.map.call(v.textTracks, function (t) { return t.cues ? t.cues.length : 0; });")
    assert cues and all(count > 0 for count in cues), cues

    # jQuery from the runtime drives the page's own script; math is rendered; the unit's
    # style-only component ran here too; the framed tool works from its bundled files.
    from selenium.webdriver.common.by import By
    browser.get("file://" + os.path.join(target, "html", "interactive_page", "index.html"))
    assert browser.execute_script("return document.documentElement.classList.contains('unit-script-ran')")
    assert browser.execute_script("return document.querySelectorAll('.katex').length") == 2
    assert not browser.find_element(By.ID, "hint").is_displayed()
    browser.find_element(By.ID, "reveal").click()
    assert browser.find_element(By.ID, "hint").is_displayed()
    browser.switch_to.frame(browser.find_element(By.TAG_NAME, "iframe"))
    browser.find_element(By.ID, "up").click()
    browser.find_element(By.ID, "up").click()
    assert browser.find_element(By.ID, "count").text == "2"
    assert browser.execute_script("return document.querySelector('img').naturalWidth") > 0
    browser.switch_to.default_content()

    # An answer submitted from a file:// page, with no host bridge, stays in the page's storage
    # with a visible "saved on this device"; a host imports it into the outbox with CAPA's names.
    browser.get("file://" + os.path.join(target, "problem", "offline_quiz", "index.html"))
    browser.find_elements(By.CSS_SELECTOR, "input[type=radio]")[1].click()
    browser.find_element(By.CSS_SELECTOR, "button.coursepack-submit").click()
    assert "Saved on this device" in browser.find_element(By.CSS_SELECTOR, ".coursepack-answer-status").text
    stored = json.loads(browser.execute_script("return localStorage.getItem('coursepack:outbox')"))
    assert [a["fields"] for a in stored] == [{"input_offline_quiz_2_1": "choice_1"}]
    imported = subprocess.run([coursepack(), "answers", target, "--add", "-"], input=json.dumps(stored[0]),
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    listed = subprocess.run([coursepack(), "answers", target], capture_output=True, text=True).stdout
    assert "pending" in listed and "1 answers: 1 pending" in listed
    browser.execute_script("coursepack.showResult(arguments[0], {success: 'correct', current_score: 1, total_possible: 1})",
                           stored[0]["usage_id"])
    assert browser.find_element(By.CSS_SELECTOR, ".coursepack-answer-status").text == "Correct (1/1)"


class Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if (tag, key) in (("a", "href"), ("iframe", "src")) and value:
                self.links.append(value)


def links_of(path):
    parser = Anchors()
    parser.feed(open(path, encoding="utf-8").read())
    return parser.links


def test_outline_page_links_every_installed_page_and_its_links_resolve(browser, demo_target):
    outline = os.path.join(demo_target, "index.html")
    _, pages = pagecheck.pages_of(demo_target)
    installed = {os.path.relpath(page, demo_target) for page, _ in pages}
    assert len(installed) >= 250
    linked = {unquote(link) for link in links_of(outline)}
    assert installed <= linked, sorted(installed - linked)[:5]
    # Every link of the outline, and of every previous/next frame page, opens in the browser.
    frames = sorted(os.listdir(os.path.join(demo_target, "_navigation")), key=lambda name: int(name.split(".")[0]))
    assert len(frames) == len(installed)
    report = pagecheck.Report()
    pagecheck.check_page(browser, outline, {}, demo_target, report)
    # A frame page is held to what its framed block declares.
    for name in frames[:3] + frames[-2:]:
        _, block = pages[int(name.split(".")[0]) - 1]
        pagecheck.check_page(browser, os.path.join(demo_target, "_navigation", name), block, demo_target, report)
    assert report.failures() == [], "\n".join(map(str, report.failures()[:20]))
    # Previous/next walk the installed pages in course order, each once.
    walked, frame = [], "1.html"
    while frame:
        links = links_of(os.path.join(demo_target, "_navigation", frame))
        walked.append(next(link for link in links if link.startswith("../") and link.endswith("/index.html") and link != "../index.html"))
        frame = next((link for link in links if link[0].isdigit() and int(link.split(".")[0]) == int(frame.split(".")[0]) + 1), None)
    order = [os.path.relpath(page, demo_target) for page, _ in pages]
    assert [unquote(link[3:]) for link in walked] == order


def test_pages_served_by_coursepack_serve_work_over_loopback(tmp_path_factory):
    """Every page and the outline, opened from `coursepack serve` with only loopback reachable."""
    import select

    course = build_and_sync(EXAMPLE, tmp_path_factory, "served")
    server = subprocess.Popen([coursepack(), "serve", os.path.dirname(course), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 30)
        assert ready, "coursepack serve printed nothing in 30 s"
        line = server.stdout.readline()
        assert "serving" in line, line + server.stderr.read() if server.poll() is not None else line
        served = line.split()[-1] + quote(os.path.basename(course)) + "/"
        assert served.startswith("http://127.0.0.1:")
        driver = pagecheck.start_browser(loopback=True)
        try:
            report = pagecheck.Report()
            pagecheck.check_page(driver, os.path.join(course, "index.html"), {}, course, report, served=served)
            _, pages = pagecheck.pages_of(course)
            for page, block in pages:
                pagecheck.check_page(driver, page, block, course, report, served=served)
            assert report.pages == len(pages) + 1 >= 5
            assert report.failures() == [], "\n".join(map(str, report.failures()))
            # The video's captions load over HTTP too.
            driver.get(served + "video/lecture_video/index.html")
            cues = driver.execute_script(
                "var v = document.querySelector('video'); return Array.prototype.map.call(v.textTracks, function (t) { return t.cues ? t.cues.length : 0; });")
            assert cues and all(count > 0 for count in cues), cues

            # The outline's search works when served too, and opens the page it finds.
            from selenium.webdriver.common.by import By
            driver.get(served + "index.html")
            results = search_in_outline(driver, "block becomes archive")
            assert results and results[0][1] == served + "video/lecture_video/index.html", results
            driver.find_element(By.CSS_SELECTOR, "#coursepack-search-results > li a").click()
            assert driver.current_url == served + "video/lecture_video/index.html"

            # An answer submitted on a served page reaches the course's outbox, CAPA-named.
            from selenium.webdriver.common.by import By
            driver.get(served + "problem/offline_quiz/index.html")
            driver.find_elements(By.CSS_SELECTOR, "input[type=radio]")[1].click()
            driver.find_element(By.CSS_SELECTOR, "button.coursepack-submit").click()
            for _ in range(50):
                if "Submitted" in driver.find_element(By.CSS_SELECTOR, ".coursepack-answer-status").text:
                    break
                time.sleep(0.1)
            assert "Submitted" in driver.find_element(By.CSS_SELECTOR, ".coursepack-answer-status").text
            listed = subprocess.run([coursepack(), "answers", os.path.dirname(course), "--json"], capture_output=True, text=True)
            entries = json.loads(listed.stdout)
            assert [(e["state"], e["fields"]) for e in entries] == [("pending", {"input_offline_quiz_2_1": ["choice_1"]})]
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(10)


def first_page(target, predicate):
    _, pages = pagecheck.pages_of(target)
    for page, block in pages:
        if predicate(page, block, open(page, encoding="utf-8", errors="replace").read()):
            return page
    raise AssertionError("no page matches")


def test_screenshots_at_desktop_and_phone_width(browser, demo_target):
    os.makedirs(SCREENSHOTS, exist_ok=True)
    chosen = {
        "html": first_page(demo_target, lambda p, b, text: b["type"] == "html" and "<img" in text and "katex" not in text),
        "problem": first_page(demo_target, lambda p, b, text: b["type"] == "problem" and 'type="checkbox"' in text),
        "video": first_page(demo_target, lambda p, b, text: b["type"] == "video"),
        "math": first_page(demo_target, lambda p, b, text: "katex.min.js" in text and "\\(" in text),
    }
    for kind, page in chosen.items():
        for label, (width, height) in {"desktop": (1280, 900), "phone": (390, 844)}.items():
            path = os.path.join(SCREENSHOTS, f"{kind}-{label}.png")
            pagecheck.screenshot(browser, page, path, width, height)
            with open(path, "rb") as shot:
                assert shot.read(8) == b"\x89PNG\r\n\x1a\n"
            assert os.path.getsize(path) > 5000
    browser.set_window_size(1280, 900)
    # Math rendered: KaTeX output present, no TeX delimiters left in the page's text.
    browser.get("file://" + chosen["math"])
    assert browser.execute_script("return document.querySelectorAll('.katex').length") > 0


BROKEN_PAGES = {
    "missing-local-file": '<img src="static/not-there.png" alt="">',
    "unresolved-course-reference": '<img src="/static/never-existed.png" alt="">',
    "js-error": "<script>notDefinedAnywhere();</script>",
    "raw-tex": r"<p>What is \(120 \times 5\)?</p>",
    "entity-text": "<p>we&amp;#39;re here</p>",
    "choices-on-one-line": '<fieldset id="q1"><label><input type="radio" name="q1" value="a"> A</label> '
                           '<label><input type="radio" name="q1" value="b"> B</label></fieldset>',
    "track-without-cues": '<video></video><script>document.querySelector("video").addTextTrack("subtitles", "English", "en");</script>',
    "unlisted-network-request": '<img src="https://cdn.example.org/picture.png" alt="">',
    "dead-link": '<a href="../../html/missing/index.html">next</a>',
}


def test_every_check_fails_on_a_page_made_to_break_it(browser, tmp_path):
    target = str(tmp_path)
    blocks = []
    pages = dict(BROKEN_PAGES)
    # A page that does everything right, including a listed network image.
    pages["good"] = '<p>Fine.</p><img src="https://cdn.example.org/listed.png" alt=""><a href="#top" id="top">top</a>'
    for name, body in pages.items():
        folder = os.path.join(target, "html", name)
        os.makedirs(folder)
        with open(os.path.join(folder, "index.html"), "w", encoding="utf-8") as page:
            page.write(f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{name}</title></head><body>{body}</body></html>")
        entry = {"usage_id": f"block-v1:X+Y+Z+type@html+block@{name}", "type": "html", "parents": [],
                 "archive": f"html/{name}.zip"}
        if name == "good":
            entry["requires_network"] = ["https://cdn.example.org/listed.png"]
        blocks.append(entry)
    with open(os.path.join(target, "manifest.json"), "w") as manifest:
        json.dump({"schema_version": 2, "course_id": "course-v1:X+Y+Z", "blocks": blocks}, manifest)

    report = pagecheck.check_target(target, driver=browser)
    assert report.pages == len(pages)
    for kind in BROKEN_PAGES:
        flagged = {f.page for f in report.of_kind(kind)}
        assert flagged == {f"html/{kind}/index.html"}, f"{kind}: {flagged} ({report.findings})"
    assert not [f for f in report.findings if f.page == "html/good/index.html"]


def search_index_of(course):
    """The installed search index's documents, read as the outline page reads them."""
    manifest = json.load(open(os.path.join(course, "manifest.json"), encoding="utf-8"))
    folder = os.path.join(course, manifest["search"]["archive"][:-len(".zip")])
    text = open(os.path.join(folder, "index.js"), encoding="utf-8").read()
    prefix = "window.coursepackSearchIndex = "
    assert text.startswith(prefix) and text.endswith(";\n")
    index = json.loads(text[len(prefix):-2])
    documents = index["documents"]
    # Format 2: the documents are in part files named by index.js, each pushing one object.
    part_prefix = "(window.coursepackSearchParts = window.coursepackSearchParts || []).push("
    for name in index.get("parts", []):
        part = open(os.path.join(folder, name), encoding="utf-8").read()
        assert part.startswith(part_prefix) and part.endswith(");\n")
        documents += json.loads(part[len(part_prefix):-3])["documents"]
    return documents


def search_in_outline(driver, query):
    """Types `query` in the outline page's search box and returns the results' (text, href)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    box = driver.find_element(By.ID, "coursepack-search-query")
    box.clear()
    box.send_keys(query)
    box.send_keys(Keys.ENTER)
    items = driver.find_elements(By.CSS_SELECTOR, "#coursepack-search-results > li")
    return [(item.text, item.find_elements(By.TAG_NAME, "a")[0].get_attribute("href") if item.find_elements(By.TAG_NAME, "a") else None)
            for item in items]


def test_outline_search_finds_pages_offline_and_opens_them(browser, demo_target):
    from selenium.webdriver.common.by import By
    browser.get("file://" + os.path.join(demo_target, "index.html"))
    # The page's tokenizer splits every document's text into the terms the build published.
    documents = search_index_of(demo_target)
    assert len(documents) > 100
    terms = browser.execute_script(
        "return arguments[0].map(function (t) { return window.coursepackSearchTerms(t).join(' '); });", [d["text"] for d in documents])
    assert terms == [d["body_terms"] for d in documents]
    assert browser.execute_script("return window.coursepackSearchTerms(arguments[0]);", "Café 日本語 한국 THE ﬁle") == \
        ["cafe", "日", "本", "語", "한", "국", "file"]

    # A problem's question, a transcript's words, a phrase: the block first, linked to its page.
    for query, block in [("symbol Ancient Rome", "problem/870b16e640d541af94a308caac834d2e"),
                         ("Harvard MIT mission", "video/d5a54ce52f464acfa7a83ae155712cc3"),
                         ('"leading open-source online learning platforms"', "html/a01fc100e5e64fc5bbca09daa190cfee")]:
        results = search_in_outline(browser, query)
        assert results, query
        assert results[0][1] and results[0][1].endswith(block + "/index.html"), (query, results[:3])
    # The index is in several part files; the page loaded every one (a word of the last
    # document finds it).
    manifest = json.load(open(os.path.join(demo_target, "manifest.json"), encoding="utf-8"))
    assert len(manifest["search"]["files"]) > 2
    last = documents[-1]
    assert any(href and href.endswith(last["page"]) for _, href in search_in_outline(browser, '"' + last["title"] + '"')), last["title"]
    # Only common words: said so, no results.
    assert search_in_outline(browser, "the of") == []
    assert "common words" in browser.find_element(By.ID, "coursepack-search-status").text
    # Blocks that are online only are listed as such, not linked.
    online = search_in_outline(browser, "poll")
    assert any(href is None and "(online only)" in text for text, href in online), online

    # The outline page's script ran without an error.
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []

    # Clicking through opens the installed page, offline.
    search_in_outline(browser, "symbol Ancient Rome")
    browser.find_element(By.CSS_SELECTOR, "#coursepack-search-results > li a").click()
    assert browser.current_url.endswith("problem/870b16e640d541af94a308caac834d2e/index.html")
    assert "Ancient Rome" in browser.find_element(By.TAG_NAME, "body").text


def write_script_data_course(root):
    """A course whose page and course script load course files by name: fetch of a /static/
    path in the page, and an XHR and jQuery.getJSON of a bare name in a script file."""
    files = {
        "course.xml": '<course url_name="run" org="CoursepackX" course="DATA"/>',
        "course/run.xml": '<course display_name="Script data"><chapter url_name="c"/></course>',
        "chapter/c.xml": '<chapter display_name="C"><sequential url_name="s"/></chapter>',
        "sequential/s.xml": '<sequential display_name="S"><vertical url_name="v"/></sequential>',
        "vertical/v.xml": '<vertical display_name="V"><html url_name="data_page"/></vertical>',
        "html/data_page.xml": '<html filename="data_page" display_name="Data page"/>',
        "html/data_page.html": """<p id="fetched">waiting</p><p id="requested">waiting</p><p id="jquery">waiting</p>
<script>
fetch("/static/data.csv").then(function (r) { return r.text(); })
  .then(function (t) { document.getElementById("fetched").textContent = t.trim().split("\\n")[1]; });
</script>
<script src="/static/js/layout.js"></script>
""",
        "static/js/layout.js": """var request = new XMLHttpRequest();
request.open("GET", "course_layout.json");
request.responseType = "json";
request.onload = function () { document.getElementById("requested").textContent = request.response.title; };
request.send();
$.getJSON('course_layout.json', function (layout) { document.getElementById("jquery").textContent = layout.sections.join(","); });
""",
        "static/course_layout.json": '{"title": "Layout from JSON", "sections": ["intro", "lab"]}',
        "static/data.csv": "name,value\nfetched row,42\n",
    }
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return root


def loaded_texts(driver):
    for _ in range(50):
        texts = driver.execute_script(
            "return ['fetched', 'requested', 'jquery'].map(function (id) { return document.getElementById(id).textContent; });")
        if "waiting" not in texts:
            break
        time.sleep(0.1)
    return texts


def test_course_files_that_scripts_load_by_name_load_from_file_and_under_serve(browser, tmp_path_factory):
    import select

    course = write_script_data_course(str(tmp_path_factory.mktemp("script-data-course")))
    target = build_and_sync(course, tmp_path_factory, "script-data")
    page = os.path.join(target, "html", "data_page", "index.html")
    expected = ["fetched row,42", "Layout from JSON", "intro,lab"]

    report = pagecheck.Report()
    pagecheck.check_page(browser, page, {}, target, report)
    assert loaded_texts(browser) == expected
    assert report.failures() == [], "\n".join(map(str, report.failures()))

    server = subprocess.Popen([coursepack(), "serve", os.path.dirname(target), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 30)
        assert ready, "coursepack serve printed nothing in 30 s"
        served = server.stdout.readline().split()[-1] + quote(os.path.basename(target)) + "/"
        driver = pagecheck.start_browser(loopback=True)
        try:
            served_report = pagecheck.Report()
            pagecheck.check_page(driver, page, {}, target, served_report, served=served)
            assert driver.current_url == served + "html/data_page/index.html"
            assert loaded_texts(driver) == expected
            assert served_report.failures() == [], "\n".join(map(str, served_report.failures()))
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(10)


def test_only_course_files_inside_the_export_are_carried_for_scripts(tmp_path_factory):
    """A script's strings that name files outside static/ (`..`, absolute paths, other hosts, a
    link out of the export) carry nothing; a file over the size limit is reported, not carried."""
    import zipfile

    course = write_script_data_course(str(tmp_path_factory.mktemp("hostile-script-course")))
    secret = tmp_path_factory.mktemp("outside") / "secret.json"
    secret.write_text('{"secret": "outside the export"}')
    os.symlink(str(secret), os.path.join(course, "static", "linked.json"))
    with open(os.path.join(course, "static", "big.json"), "w") as f:
        f.write('{"pad": "' + "x" * (3 << 20) + '"}')
    with open(os.path.join(course, "static", "js", "layout.js"), "a") as f:
        f.write('fetch("../../policies/assets.json"); fetch("/etc/hostname.txt"); fetch("https://example.org/course_layout.json");\n'
                'fetch("linked.json"); fetch("big.json"); fetch("static/../course.xml"); var t = `${"data"}.csv`;\n')
    out = str(tmp_path_factory.mktemp("hostile-script-out"))
    built = subprocess.run([coursepack(), "build", course, "--out", out], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert "static/big.json" in built.stderr and "too large" in built.stderr, built.stderr
    with zipfile.ZipFile(os.path.join(out, "html", "data_page.zip")) as archive:
        carried = archive.read("coursepack-files.js").decode()
    start = carried.index("var files = ") + len("var files = ")
    files = json.loads(carried[start:carried.index(";\n", start)])
    assert sorted(files) == ["course_layout.json", "data.csv"], sorted(files)
    assert "outside the export" not in carried


def test_an_lms_shaped_course_script_finds_its_config_and_pages_under_serve(tmp_path_factory):
    """An HX-JS-like course script reads the course id from location.pathname, loads its config
    by an asset-v1 key and follows a jump_to_id link: under serve's /courses/<id>/ shape it all
    resolves over loopback; from file:// the same page degrades with no JS error."""
    import select
    from selenium.webdriver.common.by import By

    source = str(tmp_path_factory.mktemp("lms-shaped") / "course")
    shutil.copytree(EXAMPLE, source)
    with open(os.path.join(source, "static", "js", "hxlike.js"), "w") as f:
        f.write("""// Like hx.js: the course id from the LMS's layout, /courses/course-v1:ORG+NUM+RUN/...
(function () {
  var out = document.getElementById("hx-result");
  var match = /^\\/courses\\/([^\\/]+)\\//.exec(window.location.pathname);
  if (!match) { out.textContent = "not under the LMS"; return; }
  var id = decodeURIComponent(match[1]);
  var script = document.createElement("script");
  script.src = "/" + id.replace("course-v1:", "asset-v1:") + "+type@asset+block@hx-config.js";
  script.onload = function () {
    fetch("/courses/" + id + "/jump_to_id/welcome_page").then(function (response) {
      out.textContent = window.hxConfig.name + " " + response.status + " " + new URL(response.url).pathname;
    });
  };
  document.head.appendChild(script);
})();
""")
    with open(os.path.join(source, "static", "hx-config.js"), "w") as f:
        f.write('window.hxConfig = {name: "configured"};\n')
    with open(os.path.join(source, "html", "hx_page.html"), "w") as f:
        f.write('<p id="hx-result">waiting</p><p><a href="/static/hx-config.js">config</a></p>\n'
                '<script src="/static/js/hxlike.js"></script>\n')
    with open(os.path.join(source, "html", "hx_page.xml"), "w") as f:
        f.write('<html filename="hx_page" display_name="HX-like page"/>\n')
    unit = os.path.join(source, "vertical", "intro_unit.xml")
    text = open(unit).read().replace('<html url_name="welcome_page"/>', '<html url_name="welcome_page"/>\n  <html url_name="hx_page"/>')
    open(unit, "w").write(text)

    course = build_and_sync(source, tmp_path_factory, "lms-shaped-synced")
    # The page still says it needs the LMS's page: serve's URL space is no reason to stop saying so.
    blocks = json.load(open(os.path.join(course, "manifest.json")))["blocks"]
    assert [b.get("requires_network") for b in blocks if b["usage_id"].endswith("@hx_page")] == [["lms:static/js/hxlike.js"]]
    server = subprocess.Popen([coursepack(), "serve", os.path.dirname(course), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 30)
        assert ready, "coursepack serve printed nothing in 30 s"
        base = server.stdout.readline().split()[-1]
        lms = "/courses/course-v1:CoursepackX+CP101+2026/"
        driver = pagecheck.start_browser(loopback=True)
        try:
            result = ""
            driver.get_log("browser")
            driver.get(base + lms.lstrip("/") + "html/hx_page/index.html")
            for _ in range(50):
                result = driver.find_element(By.ID, "hx-result").text
                if result != "waiting":
                    break
                time.sleep(0.1)
            assert result == "configured 200 " + lms + "html/welcome_page/index.html", result
            errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE" and e.get("source") != "network"]
            assert errors == [] and driver.execute_script("return window.__coursepackErrors || []") == [], errors

            # Opened by its plain path (the outline's link), the page that needs the LMS's URL
            # is redirected into that shape; the script works there as well.
            driver.get(base + quote(os.path.basename(course)) + "/html/hx_page/index.html")
            assert driver.current_url == base + lms.lstrip("/") + "html/hx_page/index.html", driver.current_url
            for _ in range(50):
                result = driver.find_element(By.ID, "hx-result").text
                if result != "waiting":
                    break
                time.sleep(0.1)
            assert result.startswith("configured 200 "), result

            driver.get("file://" + os.path.join(course, "html", "hx_page", "index.html"))
            time.sleep(0.2)
            assert driver.find_element(By.ID, "hx-result").text == "not under the LMS"
            errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE" and e.get("source") != "network"]
            assert errors == [] and driver.execute_script("return window.__coursepackErrors || []") == [], errors
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(10)


def read_events(course):
    """The course's events journal as an independent reader sees it: each event's last record."""
    path = os.path.join(course, ".coursepack-sync", "events.jsonl")
    latest = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            entry = record.get("entry")
            if entry:
                latest[entry["id"]] = entry
    return sorted(latest.values(), key=lambda entry: entry["timestamp"])


def test_a_served_page_records_video_play_pause_and_page_views_in_the_events_journal(tmp_path_factory):
    """Real Chromium, only loopback reachable: the learner opens the video page, plays the video,
    seeks, changes its speed, pauses it, answers the quiz and goes back to the outline; the page
    views, the video events and the problem check land in the course's events journal, with the
    block the page shows and the payloads the LMS's tracking log has for them."""
    import select
    import wave
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    # The example's lecture.mp4 is H.264, which Chromium's open build cannot decode: the same
    # name holds 3 s of silence as WAV, which Chromium plays in a <video> whatever its name.
    source = str(tmp_path_factory.mktemp("events-course") / "course")
    shutil.copytree(EXAMPLE, source)
    with wave.open(os.path.join(source, "static", "lecture.mp4"), "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\0\0" * 8000 * 3)
    course = build_and_sync(source, tmp_path_factory, "events")
    server = subprocess.Popen([coursepack(), "serve", os.path.dirname(course), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 30)
        assert ready, "coursepack serve printed nothing in 30 s"
        served = server.stdout.readline().split()[-1] + quote(os.path.basename(course)) + "/"
        driver = pagecheck.start_browser(loopback=True)
        try:
            driver.get(served + "video/lecture_video/index.html")
            ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, "video.coursepack-video")).click().perform()
            played = driver.execute_async_script(
                "var done = arguments[0], v = document.querySelector('video'); v.muted = true;"
                "v.play().then(function () { setTimeout(function () {"
                "  v.addEventListener('seeked', function () { v.playbackRate = 1.5; setTimeout(function () { v.pause(); done('played'); }, 200); }, { once: true });"
                "  v.currentTime = 2; }, 300); }).catch(function (e) { done(String(e)); });")
            assert played == "played", played
            driver.get(served + "problem/offline_quiz/index.html")
            driver.find_elements(By.CSS_SELECTOR, "input[type=radio]")[1].click()
            driver.find_element(By.CSS_SELECTOR, "button.coursepack-submit").click()
            driver.get(served + "index.html")
            wanted = {"page_view", "play_video", "pause_video", "seek_video", "speed_change_video", "problem_check"}
            for _ in range(100):
                events = read_events(course)
                if wanted <= {event["name"] for event in events} and any(e["name"] == "page_view" and not e.get("usage_id") for e in events):
                    break
                time.sleep(0.1)
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(10)
    video_id = "block-v1:CoursepackX+CP101+2026+type@video+block@lecture_video"
    names = [(event["name"], event.get("usage_id")) for event in events]
    assert ("page_view", video_id) in names and ("page_view", None) in names, names
    order = [names.index((name, video_id)) for name in ["play_video", "seek_video", "speed_change_video", "pause_video"]]
    assert order == sorted(order), names
    by_name = {event["name"]: event["data"] for event in events}
    assert by_name["play_video"]["id"] == "lecture_video" and by_name["play_video"]["code"] == "html5", by_name
    assert isinstance(by_name["play_video"]["currentTime"], (int, float)), by_name
    assert 2 <= by_name["seek_video"]["new_time"] < 2.5 and by_name["seek_video"]["old_time"] < 2, by_name
    assert (by_name["speed_change_video"]["old_speed"], by_name["speed_change_video"]["new_speed"]) == ("1", "1.5"), by_name
    assert by_name["pause_video"]["currentTime"] >= 2, by_name
    quiz = "block-v1:CoursepackX+CP101+2026+type@problem+block@offline_quiz"
    assert ("problem_check", quiz) in names, names
    assert by_name["problem_check"] == {"problem_id": quiz, "answers": {"input_offline_quiz_2_1": "choice_1"}}, by_name
    assert all(event["state"] == "pending" and event["timestamp"].endswith("Z") for event in events), events
