#!/usr/bin/env python3
"""Offline search, measured: index size against the course's text, build time the search step
adds to a full and a no-op build, and query latency (CLI over FTS5, and the outline page in
Chromium) on the demo course and on the demo course x16 (its chapters repeated 16 times, as
one course). Timings are wall clock on whatever else the machine is doing: run it on a quiet one.

    bench/search.py [--bin .build/release] [--copies 16] [--runs 5] [--out FILE]
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time, zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEMO = os.path.join(ROOT, "..", "shared", "corpus", "openedx-demo-course", "course")
QUERIES = ["Ancient Rome", "Harvard MIT mission", '"leading open-source online learning platforms"', "video transcript", "abacus"]
PREFIX = "window.coursepackSearchIndex = "
PART_PREFIX = "(window.coursepackSearchParts = window.coursepackSearchParts || []).push("


def run(args, **kw):
    result = subprocess.run(args, capture_output=True, text=True, **kw)
    if result.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)}: exit {result.returncode}\n{result.stderr}")
    return result


def repeated_course(work, copies):
    """The demo course with its chapters listed `copies` times: the loader renames the repeated
    url_names, as the LMS import does, so every copy is a block of its own."""
    course = os.path.join(work, f"demo-x{copies}")
    shutil.copytree(DEMO, course)
    path = os.path.join(course, "course", "DemoCourse.xml")
    text = open(path, encoding="utf-8").read()
    chapters = re.search(r'(\s*<chapter url_name="[^"]+"/>)+', text)
    open(path, "w", encoding="utf-8").write(text[:chapters.start()] + chapters.group(0) * copies + text[chapters.end():])
    return course


def build(binary, course, out, report):
    started = time.perf_counter()
    run([binary, "build", course, "--out", out, "--report", report, "-q"])
    wall = time.perf_counter() - started
    durations = json.load(open(report))["durations"]
    return {"wall_seconds": round(wall, 3), "total_seconds": round(durations["total_seconds"], 3),
            "search_seconds": round(durations.get("search_seconds", 0), 3)}


def sizes(out):
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    archive = zipfile.ZipFile(os.path.join(out, manifest["search"]["archive"]))
    data = archive.read("index.js")
    index = json.loads(data[len(PREFIX):-2])
    # Format 2: the documents are in the part files index.js names.
    for name in index.get("parts", []):
        part = archive.read(name)
        data += part
        index["documents"] += json.loads(part[len(PART_PREFIX):-3])["documents"]
    text = sum(len(d["text"].encode()) + len(d["title"].encode()) + len(" ".join(d["path"]).encode()) for d in index["documents"])
    archives = sum(b.get("size", 0) for b in manifest["blocks"])
    return {"documents": len(index["documents"]), "text_bytes": text, "index_js_bytes": len(data),
            "index_zip_bytes": manifest["search"]["size"], "index_js_per_text_byte": round(len(data) / text, 2),
            "block_archives_bytes": archives}


def cli_latency(binary, target, runs):
    result = {}
    started = time.perf_counter()
    run([binary, "search", target, QUERIES[0]])
    result["first_query_seconds_building_fts5"] = round(time.perf_counter() - started, 3)
    for query in QUERIES:
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            run([binary, "search", target, query, "--json"])
            times.append(time.perf_counter() - started)
        result[query] = round(statistics.median(times), 3)
    started = time.perf_counter()
    run([binary, "--version"])
    result["process_start_only"] = round(time.perf_counter() - started, 3)
    return result


def browser_latency(course, runs):
    try:
        sys.path.insert(0, os.path.join(ROOT, "Tests", "browser"))
        import pagecheck
        driver = pagecheck.start_browser()
    except Exception as error:  # noqa: BLE001 - measured only where Chromium and Selenium are
        return {"skipped": str(error)}
    try:
        driver.get("file://" + os.path.join(course, "index.html"))
        result = {"page_load_ms": driver.execute_script(
            "var t = performance.getEntriesByType('navigation')[0]; return Math.round(t.loadEventEnd - t.startTime);")}
        for query in QUERIES:
            times = driver.execute_script("""
                var input = document.getElementById('coursepack-search-query'), times = [];
                for (var i = 0; i < arguments[1]; i++) {
                  var started = performance.now();
                  input.value = arguments[0];
                  input.dispatchEvent(new Event('input'));
                  times.push(performance.now() - started);
                }
                return times;""", query, runs)
            result[query + " (ms)"] = round(statistics.median(times), 1)
        return result
    finally:
        driver.quit()


def course_folder(target):
    return next(os.path.join(target, n) for n in sorted(os.listdir(target)) if os.path.isfile(os.path.join(target, n, "manifest.json")))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--copies", type=int, default=16)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()
    binary = os.path.join(args.bin, "coursepack")
    work = tempfile.mkdtemp(prefix="coursepack-search-bench-")
    results = {"binary": binary}
    try:
        for label, course in [("demo", DEMO), (f"demo_x{args.copies}", repeated_course(work, args.copies))]:
            out, target = os.path.join(work, label + "-out"), os.path.join(work, label + "-device")
            report = os.path.join(work, label + "-report.json")
            entry = {"full_build": build(binary, course, out, report), "no_op_build": build(binary, course, out, report)}
            # One page edited: the search step extracts that block's text, reuses the others'.
            edited = course if course != DEMO else shutil.copytree(DEMO, os.path.join(work, "demo-edited"))
            page = os.path.join(edited, "html", sorted(n for n in os.listdir(os.path.join(edited, "html")) if n.endswith(".html"))[0])
            with open(page, "a", encoding="utf-8") as handle:
                handle.write("<p>One more sentence about lighthouses.</p>")
            entry["one_page_edit_build"] = build(binary, edited, out, report)
            entry["sizes"] = sizes(out)
            run([binary, "sync", out, "--to", target])
            entry["cli_query_seconds"] = cli_latency(binary, target, args.runs)
            entry["browser"] = browser_latency(course_folder(target), args.runs)
            results[label] = entry
            print(json.dumps({label: entry}, indent=1), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.out:
        with open(args.out, "w") as out:
            json.dump(results, out, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
