"""Opens every unpacked page of a synced course in headless Chromium with the network off and
reports what a learner would see break: local files that do not load, script errors, raw TeX,
double-escaped entities, choices sharing a line, video tracks without cues, network requests
the manifest's requires_network does not list, and dead links between pages.

Used by the browser tests; also runs on its own:
    python3 Tests/browser/pagecheck.py TARGET [--screenshots DIR]
"""

import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit

CHROMIUM_CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
DRIVER_CANDIDATES = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]

# Installed before any page script runs: records uncaught errors and rejected promises.
ERROR_HOOK = """
window.__coursepackErrors = [];
window.addEventListener('error', function (e) {
  if (e.target && e.target !== window) return;
  window.__coursepackErrors.push(String(e.message) + ' at ' + (e.filename || '?') + ':' + (e.lineno || 0));
});
window.addEventListener('unhandledrejection', function (e) {
  window.__coursepackErrors.push('unhandled rejection: ' + String(e.reason));
});
"""

# Visible text of the page: text nodes that are rendered, outside scripts, styles, code and the
# MathML copy KaTeX keeps for screen readers.
VISIBLE_TEXT = """
var skip = ['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'TEXTAREA', 'PRE', 'CODE'];
var out = [];
var walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
var node;
while ((node = walker.nextNode())) {
  var el = node.parentElement, hidden = false;
  for (var p = el; p; p = p.parentElement) {
    if (skip.indexOf(p.tagName) >= 0 || (p.classList && p.classList.contains('katex-mathml'))) { hidden = true; break; }
  }
  if (hidden || !el.checkVisibility()) continue;
  out.push(node.nodeValue);
}
return out.join(' ');
"""

# Pairs of choices of one question whose boxes share a line.
CHOICES_ON_ONE_LINE = """
var found = [];
document.querySelectorAll('fieldset').forEach(function (set) {
  var inputs = Array.prototype.filter.call(set.querySelectorAll('input[type=radio], input[type=checkbox]'),
    function (i) { return i.checkVisibility(); });
  for (var a = 0; a < inputs.length; a++) for (var b = a + 1; b < inputs.length; b++) {
    var ra = inputs[a].getBoundingClientRect(), rb = inputs[b].getBoundingClientRect();
    if (Math.abs(ra.top - rb.top) < Math.max(ra.height, rb.height) / 2) {
      found.push((set.id || 'fieldset') + ': ' + inputs[a].value + ' and ' + inputs[b].value);
    }
  }
});
return found;
"""

# Tracks of every video, made to load (mode hidden), with how many cues each has.
TRACK_CUES = """
var done = arguments[arguments.length - 1];
var videos = Array.prototype.slice.call(document.querySelectorAll('video'));
if (videos.length === 0) { done([]); return; }
videos.forEach(function (v) { for (var i = 0; i < v.textTracks.length; i++) if (v.textTracks[i].mode === 'disabled') v.textTracks[i].mode = 'hidden'; });
setTimeout(function () {
  var out = [];
  videos.forEach(function (v, n) {
    for (var i = 0; i < v.textTracks.length; i++) {
      var t = v.textTracks[i];
      out.push({video: n, track: t.language || t.label || String(i), cues: t.cues ? t.cues.length : 0});
    }
  });
  done(out);
}, 300);
"""

LINKS = """
return Array.prototype.map.call(document.querySelectorAll('a[href]'), function (a) {
  return {href: a.href, raw: a.getAttribute('href')};
});
"""

RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\[/?mathjax(inline)?\]|\\begin\{")
ENTITY_TEXT = re.compile(r"&(#[0-9]+|#x[0-9a-fA-F]+|quot|amp|lt|gt|apos|nbsp);")


@dataclass
class Finding:
    kind: str
    page: str
    detail: str

    def __str__(self):
        return f"{self.kind}: {self.page}: {self.detail}"


@dataclass
class Report:
    pages: int = 0
    findings: list = field(default_factory=list)

    def failures(self):
        return [f for f in self.findings if f.kind in FAILING]

    def of_kind(self, kind):
        return [f for f in self.findings if f.kind == kind]

    def counts(self):
        counts = {kind: 0 for kind in KINDS}
        for f in self.findings:
            counts[f.kind] += 1
        return counts


KINDS = [
    "missing-local-file",
    "js-error",
    "declared-lms-script-error",
    "unresolved-course-reference",
    "raw-tex",
    "entity-text",
    "choices-on-one-line",
    "track-without-cues",
    "unlisted-network-request",
    "dead-link",
]


# Every kind fails the check but references the course itself gets wrong (the build reports
# them) and errors of scripts the manifest declares as needing the LMS page.
FAILING = [kind for kind in KINDS if kind not in ("declared-lms-script-error", "unresolved-course-reference")]


def find_executable(candidates, name):
    for path in candidates:
        if os.path.exists(path):
            return path
    return shutil.which(name)


def start_browser(width=1280, height=900, loopback=False):
    """Headless Chromium with the network switched off (DevTools offline mode and a dead proxy).
    With `loopback`, addresses on this machine stay reachable (for pages a local server serves)
    and every other goes to the dead proxy."""
    from selenium import webdriver

    browser = find_executable(CHROMIUM_CANDIDATES, "chromium")
    driver_path = find_executable(DRIVER_CANDIDATES, "chromedriver")
    if not browser or not driver_path:
        raise RuntimeError("chromium and chromium-driver are needed (apt-get install chromium chromium-driver)")
    os.environ.setdefault("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--proxy-server=127.0.0.1:9",
                     "--proxy-bypass-list=<local>" if loopback else "--proxy-bypass-list=<-loopback>",
                     "--hide-scrollbars", "--force-color-profile=srgb", "--autoplay-policy=user-gesture-required"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(10)
    driver.execute_cdp_cmd("Network.enable", {})
    if not loopback:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                               {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": ERROR_HOOK})
    return driver


def pages_of(target):
    """(page path, manifest entry) for every installed block of a synced course folder."""
    manifest = json.load(open(os.path.join(target, "manifest.json"), encoding="utf-8"))
    pages = []
    for block in manifest["blocks"]:
        archive = block.get("archive")
        if not archive:
            continue
        page = os.path.join(target, archive[: -len(".zip")], "index.html")
        pages.append((page, block))
    return manifest, pages


def network_events(driver):
    """Requests and failed loads since the last call, from Chromium's performance log."""
    requests, failures = {}, []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            requests[params["requestId"]] = params["request"]["url"]
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            failures.append((params["requestId"], params.get("errorText", "")))
        elif method == "Network.responseReceived" and params.get("response", {}).get("status", 0) >= 400:
            # Over HTTP a missing or refused file is an answer, not a failed load.
            failures.append((params["requestId"], f"HTTP {params['response']['status']}"))
    return requests, [(requests.get(rid, "?"), text) for rid, text in failures]


def is_listed(url, listed):
    """A network URL counts as listed when requires_network names it, or names the page (or
    origin) it belongs to."""
    base = url.split("#")[0]
    for item in listed:
        if base == item or base.startswith(item.rstrip("/") + "/") or base.startswith(item + "?"):
            return True
    return False


def check_page(driver, page, block, target, report, served=None):
    """`served`: the URL `target` is served at (…/ ending in a slash), to open the page over HTTP
    instead of file://; its requests and links are then held to the files under `target`."""
    name = os.path.relpath(page, target)
    url_of_page = served + quote(name) if served else "file://" + page

    def local_path(url):
        """The file a URL of the page stands for, or None for one elsewhere."""
        if served:
            parts, base = urlsplit(url), urlsplit(served)
            if (parts.scheme, parts.netloc) != (base.scheme, base.netloc):
                return None
            # The served origin outside the course folder stands for a path outside `target`,
            # as file:///static/… does for a page opened from disk.
            if not parts.path.startswith(base.path):
                return unquote(parts.path)
            return os.path.join(target, unquote(parts.path[len(base.path):]))
        if not served and url.startswith("file:"):
            return unquote(urlsplit(url).path)
        return None

    listed = block.get("requires_network", [])
    # Start from a blank page with an empty log, so nothing a previous page started late (a
    # framed tool's delayed request) is counted against this one.
    driver.get("about:blank")
    network_events(driver)
    driver.get_log("browser")
    driver.get(url_of_page)
    # Timers and promises started on load; framed tools get longer to start theirs.
    time.sleep(1.0 if driver.execute_script("return document.querySelector('iframe, object, embed') !== null") else 0.05)
    requests, failures = network_events(driver)

    for url, error in failures:
        path = local_path(url)
        if path is None:
            continue
        # Inside the synced folder a failed load is a packaging bug; outside it (file:///static/…)
        # it is a reference the course itself gets wrong, which the build reports as unresolved.
        inside = os.path.normpath(path).startswith(target + "/")
        kind = "missing-local-file" if inside else "unresolved-course-reference"
        report.findings.append(Finding(kind, name, f"{unquote(url)} ({error})"))
    for url in sorted(set(requests.values())):
        scheme = urlsplit(url).scheme
        if scheme in ("http", "https", "ws", "wss", "ftp") and not is_listed(url, listed) and local_path(url) is None:
            report.findings.append(Finding("unlisted-network-request", name, url))

    # A page whose manifest entry says a course script needs the LMS page (lms:static/…) is
    # expected to have that script fail offline; its errors are counted apart, not hidden.
    error_kind = "declared-lms-script-error" if any(item.startswith("lms:") for item in listed) else "js-error"
    errors = list(driver.execute_script("return window.__coursepackErrors || []"))
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE" and entry.get("source") not in ("network",):
            text = entry.get("message", "")
            if "Failed to load resource" not in text:
                errors.append(text)
    if errors:
        report.findings.append(Finding(error_kind, name, f"{len(errors)} errors, first: {errors[0]}"))

    text = driver.execute_script(VISIBLE_TEXT)
    for kind, pattern in (("raw-tex", RAW_TEX), ("entity-text", ENTITY_TEXT)):
        matches = list(pattern.finditer(text))
        if matches:
            first = matches[0]
            report.findings.append(Finding(kind, name, f"{len(matches)} times, first: "
                                           + repr(text[max(0, first.start() - 30): first.end() + 30])))
    # Math the renderer could not read shows as its source.
    for source in driver.execute_script(
            "return Array.prototype.map.call(document.querySelectorAll('.katex-error'), function (e) { return e.textContent; })"):
        report.findings.append(Finding("raw-tex", name, "math that did not render: " + repr(source[:80])))

    for pair in driver.execute_script(CHOICES_ON_ONE_LINE):
        report.findings.append(Finding("choices-on-one-line", name, pair))

    for track in driver.execute_async_script(TRACK_CUES):
        if track["cues"] == 0:
            report.findings.append(Finding("track-without-cues", name, f"video {track['video']} track {track['track']}"))

    folder_url = url_of_page.rsplit("/", 1)[0] + "/"
    for link in driver.execute_script(LINKS):
        href = link["href"]
        parts = urlsplit(href)
        path = local_path(href.split("#")[0])
        if path is None:
            continue
        if served and (path.endswith("/") or os.path.isdir(path)):
            path = os.path.join(path, "index.html")
        if not os.path.exists(path):
            report.findings.append(Finding("dead-link", name, f"{link['raw']} -> {path}"))
        elif parts.fragment and path == page and href.startswith(folder_url):
            if not driver.execute_script("return !!document.getElementById(arguments[0])", unquote(parts.fragment)):
                report.findings.append(Finding("dead-link", name, f"{link['raw']}: no element with that id"))
    report.pages += 1


def check_target(target, driver=None, only=None):
    """Checks every installed page of `target` (or the pages whose archive path is in `only`)."""
    target = os.path.abspath(target)
    own = driver is None
    driver = driver or start_browser()
    report = Report()
    try:
        _, pages = pages_of(target)
        for page, block in pages:
            if only is not None and block["archive"] not in only:
                continue
            check_page(driver, page, block, target, report)
    finally:
        if own:
            driver.quit()
    return report


def screenshot(driver, page, path, width, height):
    driver.set_window_size(width, height)
    driver.get("file://" + page)
    time.sleep(0.3)
    driver.save_screenshot(path)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    report = check_target(argv[1])
    for finding in report.findings:
        print(finding)
    print(json.dumps({"pages": report.pages, "counts": report.counts()}))
    return 1 if report.failures() else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
