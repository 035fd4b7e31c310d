#!/usr/bin/env python3
"""`make bench-scale`: issue 33's scale figures for a course of about 100,000 blocks (the Open edX
demo course repeated SCALE_COPIES times, default 315), with the release binaries:

- the full build (`--jobs` all cores): seconds and peak RSS;
- a no-op rebuild started at once (inputs seconds old, as after an export) and one started after
  the inputs have aged: seconds and peak RSS;
- a one-block edit (one block's display name): seconds and peak RSS; then an edit of one html
  file, which the copies share (one block in each copy);
- a full sync from loopback nginx (under SCALE_BUDGET if set, e.g. 200MB): whether the client
  accepts the course, seconds, peak RSS; then a no-op sync, with the time its summary line gives;
- after a one-block edit and rebuild, a resync: the bytes the client fetched to learn of the
  edit (manifest index and parts, or the whole manifest), counted by nginx's $body_bytes_sent.

Writes bench/scale-results.json and prints a table with the issue's targets. SCALE_WORK picks the
scratch folder (default bench/work-scale); SCALE_COPIES=20 gives a quick run."""
import json, os, re, shutil, subprocess, sys, time

from nginx import Nginx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("COURSEPACK_BIN") or os.path.join(ROOT, ".build/release/coursepack")
DEMO = os.environ.get("BENCH_DEMO_COURSE") or os.path.join(ROOT, "../shared/corpus/openedx-demo-course/course")
WORK = os.environ.get("SCALE_WORK") or os.path.join(ROOT, "bench/work-scale")
COPIES = int(os.environ.get("SCALE_COPIES", "315"))
BUDGET = os.environ.get("SCALE_BUDGET", "")
STAMP = "2026-11-22T10:00:00Z"
# The part of a sync's fetches that tells the client what changed (not the changed contents).
MANIFEST_PATH = re.compile(r"^/(manifest\.json|manifest-index\.json|manifest/[0-9a-f]{64}\.json)$")


RESULTS = os.path.join(ROOT, "bench/scale-results.json")


def timed(command):
    """(seconds, peak RSS MB, stdout + stderr) of a command that must succeed (exit 0 or 1)."""
    print(f"[{time.strftime('%H:%M:%S')}] {' '.join(command[:2])} ...", flush=True)
    started = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    lines = result.stderr.strip().splitlines()
    print(f"    {seconds:.2f} s, peak {int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else '?'} MB", flush=True)
    if result.returncode not in (0, 1) or not lines or not lines[-1].isdigit():
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}")
    return seconds, int(lines[-1]) / 1024, result.stdout + "\n".join(lines[:-1])


class Results(dict):
    """Written to bench/scale-results.json at every figure: a run stopped half way (a 100k sync
    can take long) still leaves what it measured."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        with open(RESULTS, "w") as f:
            json.dump(self, f, indent=2)


def edit_shared_page(course, turn):
    """Adds a paragraph to one html file of the course (the middle one in name order). The copies
    of the demo course share their html files, so this edits one block in each copy."""
    html = os.path.join(course, "html")
    names = sorted(n for n in os.listdir(html) if n.endswith(".html"))
    name = names[len(names) // 2]
    with open(os.path.join(html, name), "a") as f:
        f.write(f"\n<p>Scale edit {turn}.</p>\n")


def edit_one_block(course, turn):
    """Renames one html block of one copy (its display name, which its page shows): one block."""
    html = os.path.join(course, "html")
    names = sorted(n for n in os.listdir(html) if n.endswith(f"_{COPIES // 2}.xml"))
    path = os.path.join(html, names[len(names) // 2])
    text = open(path, encoding="utf-8").read()
    edited, count = re.subn(r'display_name="([^"]*)"', lambda m: f'display_name="{m.group(1)} (edit {turn})"', text, count=1)
    if not count:
        edited = text.replace("<html ", f'<html display_name="Edit {turn}" ', 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(edited)


def main():
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    course, out, device = f"{WORK}/course", f"{WORK}/out", f"{WORK}/device"
    os.makedirs(WORK)
    subprocess.run([sys.executable, os.path.join(ROOT, "bench/generate_course.py"), course, "--demo", DEMO,
                    "--copies", str(COPIES), "--media-mb", "0"], check=True, stdout=subprocess.DEVNULL)
    build = lambda: [BIN, "build", course, "--out", out, "--published-at", STAMP]
    r = Results(copies=COPIES, cpus=os.cpu_count())
    r["build_s"], r["build_rss_mb"], _ = timed(build())
    published = json.load(open(f"{out}/manifest-index.json")) if os.path.exists(f"{out}/manifest-index.json") else None
    r["blocks"] = (sum(p["blocks"] for p in published["parts"]) if published
                   else len(json.load(open(f"{out}/manifest.json"))["blocks"]))
    r["binary"] = BIN
    r["noop_fresh_s"], r["noop_fresh_rss_mb"], _ = timed(build())
    time.sleep(2.5)
    r["noop_aged_s"], r["noop_aged_rss_mb"], _ = timed(build())
    edit_one_block(course, 1)
    r["edit_s"], r["edit_rss_mb"], _ = timed(build())
    edit_shared_page(course, 1)
    r["shared_edit_s"], r["shared_edit_rss_mb"], _ = timed(build())
    server = Nginx(out, log_bytes=True)
    try:
        sync = [BIN, "sync", server.url, "--to", device] + (["--budget", BUDGET] if BUDGET else [])
        r["sync_s"], r["sync_rss_mb"], output = timed(sync)
        r["sync_accepted"] = "larger than" not in output and os.path.isdir(device)
        # What the course takes on the device (du counts each hard-linked file once).
        r["device_mb"] = int(subprocess.run(["du", "-sb", device], capture_output=True, text=True).stdout.split()[0]) / 2**20
        server.take_log()
        r["noop_sync_s"], r["noop_sync_rss_mb"], output = timed(sync)
        said = re.findall(r"in ([0-9.]+) ?s\b", output)
        r["noop_sync_summary_s"] = float(said[-1]) if said else None
        server.take_log()
        edit_one_block(course, 2)
        timed(build())
        r["edit_sync_s"], _, _ = timed(sync)
        log = server.take_log()
        r["bytes_to_learn_edit"] = sum(b for p, s, b in log if MANIFEST_PATH.match(p))
        r["bytes_edit_sync_total"] = sum(b for _, _, b in log)
    finally:
        server.stop()
    report(r)


def report(r):
    def row(what, goal, value, ok):
        print(f"| {what} | {goal} | {value} | {'PASS' if ok else 'MISS'} |")
    print(f"\nscale: the demo course x{r['copies']} ({r['blocks']} blocks), {r['cpus']} cores, {r['binary']}")
    print("| target (issue 33) | goal | measured | result |\n|---|---|---|---|")
    row("full build peak RSS", "≤ 1 GB", f"{r['build_rss_mb']:.0f} MB ({r['build_s']:.1f} s)", r["build_rss_mb"] <= 1024)
    row("no-op rebuild, inputs fresh", "≤ 1.5 s, ≤ 300 MB", f"{r['noop_fresh_s']:.2f} s, {r['noop_fresh_rss_mb']:.0f} MB",
        r["noop_fresh_s"] <= 1.5 and r["noop_fresh_rss_mb"] <= 300)
    row("no-op rebuild, inputs aged", "≤ 1.5 s, ≤ 300 MB", f"{r['noop_aged_s']:.2f} s, {r['noop_aged_rss_mb']:.0f} MB",
        r["noop_aged_s"] <= 1.5 and r["noop_aged_rss_mb"] <= 300)
    row("one-block edit", "≤ 2 s", f"{r['edit_s']:.2f} s, {r['edit_rss_mb']:.0f} MB", r["edit_s"] <= 2)
    print(f"| (an html file all {r['copies']} copies share: {r['copies']} blocks) | — | {r['shared_edit_s']:.2f} s, {r['shared_edit_rss_mb']:.0f} MB | — |")
    row("sync accepts the course", "yes", f"{r['sync_accepted']} ({r['sync_s']:.1f} s, {r['sync_rss_mb']:.0f} MB, "
        f"{r.get('device_mb', 0):.0f} MB on the device)", r["sync_accepted"])
    said = r["noop_sync_summary_s"]
    row("no-op sync", "≤ 2 s, ≤ 300 MB, summary = whole time",
        f"{r['noop_sync_s']:.2f} s, {r['noop_sync_rss_mb']:.0f} MB, summary says {said}",
        r["noop_sync_s"] <= 2 and r["noop_sync_rss_mb"] <= 300 and said is not None and said >= 0.8 * r["noop_sync_s"] - 0.1)
    row("bytes to learn of one edit", "≤ 5 MB", f"{r['bytes_to_learn_edit']:,} B (resync total {r['bytes_edit_sync_total']:,} B)",
        r["bytes_to_learn_edit"] <= 5 << 20)


if __name__ == "__main__":
    main()
