#!/usr/bin/env python3
"""`make bench`: builds two generated courses with coursepack and, in the same run on the same
bytes, with Info-ZIP and a Python zipfile packager; prints a table of times, ratios and peak
memory, and writes bench/results.json."""
import json, os, shutil, subprocess, sys, tempfile, time, zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, ".build/release/coursepack")
BENCH_BIN = os.path.join(ROOT, ".build/release/coursepack-bench")
WORK = os.environ.get("BENCH_WORK") or os.path.join(ROOT, "bench/work")
MEDIA_SUFFIXES = ".mp4:.jpg:.jpeg:.png:.gif:.webp:.mp3:.m4a:.pdf:.woff:.woff2:.zip:.gz"
REPEATS = int(os.environ.get("BENCH_REPEATS", "2"))
# coursepack's own builds take about a second: more turns cost little and steady the figures.
COURSEPACK_REPEATS = int(os.environ.get("BENCH_COURSEPACK_REPEATS", "4"))


def timed(command, cwd=None):
    """Runs a command under /usr/bin/time; returns (seconds, peak RSS in MB, stdout)."""
    started = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(command)}\n{result.stderr}")
    rss_kb = int(result.stderr.strip().splitlines()[-1])
    return seconds, rss_kb / 1024, result.stdout


def best(command, prepare=None, cwd=None):
    """Best time of REPEATS runs (least disturbed by the machine), with the peak RSS seen.
    `command` may be a function of the run number, to give each run its own output folder."""
    runs = []
    for run in range(REPEATS):
        if prepare:
            prepare(run)
        # Every tool starts with the previous run's writes on disk, not still being flushed.
        os.sync()
        runs.append(timed(command(run) if callable(command) else command, cwd))
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def best_interleaved(commands, repeats):
    """Like `best` for several commands, run in turns (a, b, a, b, ...) so that a slow spell of
    the machine falls on all of them alike, not on whichever happened to run then."""
    runs = {label: [] for label in commands}
    for run in range(repeats):
        for label, command in commands.items():
            os.sync()
            runs[label].append(timed(command(run)))
    return {label: (min(r[0] for r in rs), max(r[1] for r in rs)) for label, rs in runs.items()}


TRASH = os.path.join(WORK, "trash")


def discard(path):
    """Moves `path` aside, to be deleted when the bench is over: on ext4 without a journal,
    creating files soon after many were deleted is several times slower (recently freed
    inodes are skipped one by one), which would slow whichever tool ran next."""
    if os.path.exists(path):
        os.makedirs(TRASH, exist_ok=True)
        os.rename(path, os.path.join(TRASH, f"{len(os.listdir(TRASH))}-{os.path.basename(path)}"))


def fresh(path):
    discard(path)
    os.makedirs(path)


def unused(path):
    """A new, empty folder. Runs never write where files were just deleted: ext4 skips
    recently freed inodes, which makes creating files there much slower for every tool."""
    os.makedirs(path)
    return path


def warm(folder):
    for root, _, files in os.walk(folder):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                while f.read(1 << 20):
                    pass


def extract_trees(out, trees):
    """The per-block file trees the other packagers get: exactly what coursepack bundled."""
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    fresh(trees)
    for block in manifest["blocks"]:
        if "archive" in block:
            with zipfile.ZipFile(os.path.join(out, block["archive"])) as z:
                z.extractall(os.path.join(trees, block["archive"][:-4]))


def folder_size(folder):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(folder) for f in fs)


class Nginx:
    """A real nginx on a free loopback port serving a published folder."""

    def __init__(self, root):
        import socket
        self.folder = tempfile.mkdtemp(prefix="coursepack-bench-nginx-")
        s = socket.socket(); s.bind(("127.0.0.1", 0)); self.port = s.getsockname()[1]; s.close()
        conf = os.path.join(self.folder, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""user root; worker_processes 1; error_log {self.folder}/error.log; pid {self.folder}/nginx.pid;
events {{ worker_connections 256; }}
http {{ access_log off; sendfile on; client_body_temp_path {self.folder}/b; proxy_temp_path {self.folder}/p;
  fastcgi_temp_path {self.folder}/f; uwsgi_temp_path {self.folder}/u; scgi_temp_path {self.folder}/s;
  server {{ listen 127.0.0.1:{self.port}; root {root}; }} }}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen([nginx, "-c", conf, "-p", self.folder, "-g", "daemon off;"])
        for _ in range(100):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)

    def stop(self):
        self.process.terminate()
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def bench_course(name, blocks, media_mb):
    course = os.path.join(WORK, name, "course")
    out = os.path.join(WORK, name, "out")
    trees = os.path.join(WORK, name, "trees")
    if not os.path.exists(os.path.join(course, "course.xml")):
        subprocess.run([sys.executable, os.path.join(ROOT, "bench/generate_course.py"), course, "--blocks", str(blocks), "--media-mb", str(media_mb)], check=True, stdout=subprocess.DEVNULL)
    warm(course)
    r = {"course": name, "blocks": blocks, "media_mb": media_mb, "input_mb": round(folder_size(course) / 2**20, 1)}
    stamp = "2026-11-22T10:00:00Z"
    runs = os.path.join(WORK, name, "runs")
    fresh(runs)
    jobs = os.cpu_count() or 1
    full = best_interleaved({
        "jobs1": lambda n: [BIN, "build", course, "--out", unused(f"{runs}/j1-{n}"), "--jobs", "1", "-q", "--published-at", stamp],
        "jobsall": lambda n: [BIN, "build", course, "--out", unused(f"{runs}/jall-{n}"), "--jobs", str(jobs), "-q", "--published-at", stamp],
    }, COURSEPACK_REPEATS)
    r["coursepack_jobs1_s"], r["coursepack_jobs1_rss_mb"] = full["jobs1"]
    r["coursepack_jobsall_s"], r["coursepack_jobsall_rss_mb"] = full["jobsall"]
    discard(out)
    discard(out + ".coursepack-state")
    os.rename(f"{runs}/jall-0", out)
    # The build state lives beside the output folder; it moves with it, or the no-op rebuild
    # would find none and build everything.
    os.rename(f"{runs}/jall-0.coursepack-state", out + ".coursepack-state")
    r["jobs_all"] = jobs
    report = os.path.join(runs, "noop-report.json")
    r["noop_rebuild_s"], r["noop_rebuild_rss_mb"], _ = best([BIN, "build", course, "--out", out, "-q", "--published-at", stamp, "--report", report])
    r["noop_inputs_unchanged"] = json.load(open(report)).get("inputs_unchanged", False)
    r["output_mb"] = round(folder_size(out) / 2**20, 1)
    server = Nginx(out)
    try:
        r["sync_s"], r["sync_rss_mb"], _ = best(lambda n: [BIN, "sync", f"http://127.0.0.1:{server.port}", "--to", f"{runs}/device-{n}"])
    finally:
        server.stop()
    r["sync_mb_per_s"] = r["output_mb"] / r["sync_s"]
    extract_trees(out, trees)
    warm(trees)
    loop = 'cd "$1" && for d in */*/; do (cd "$d" && zip -r -6 -q $3 "$2/${d%/}.zip" .); done'
    def target(label, n):
        folder = unused(f"{runs}/{label}-{n}")
        for kind in os.listdir(trees):
            os.makedirs(os.path.join(folder, kind))
        return folder
    r["zip_s"], r["zip_rss_mb"], _ = best(lambda n: ["bash", "-c", loop, "-", trees, target("zip", n), ""])
    r["zip_store_media_s"], r["zip_store_media_rss_mb"], _ = best(lambda n: ["bash", "-c", loop, "-", trees, target("zipn", n), "-n " + MEDIA_SUFFIXES])
    r["python_s"], r["python_rss_mb"], _ = best(lambda n: [sys.executable, os.path.join(ROOT, "bench/python_packager.py"), trees, unused(f"{runs}/python-{n}")])
    r["ratio_vs_zip_jobs1"] = r["zip_s"] / r["coursepack_jobs1_s"]
    r["ratio_vs_zip_store_media_jobs1"] = r["zip_store_media_s"] / r["coursepack_jobs1_s"]
    r["ratio_vs_python_jobs1"] = r["python_s"] / r["coursepack_jobs1_s"]
    r["jobs_speedup"] = r["coursepack_jobs1_s"] / r["coursepack_jobsall_s"]
    r["noop_ratio"] = r["noop_rebuild_s"] / r["coursepack_jobsall_s"]
    return r


def bench_writer(name):
    """The ZIP writer alone on one mixed tree (the media course's export: XML, HTML, media)."""
    tree = os.path.join(WORK, name, "course")
    target = os.path.join(WORK, "writer")
    fresh(target)
    r = {"tree_mb": round(folder_size(tree) / 2**20, 1)}
    r["coursepack_writer_s"], r["coursepack_writer_rss_mb"], _ = best(lambda n: [BENCH_BIN, "zip", tree, os.path.join(target, f"w{n}.zip")])
    r["zip_s"], r["zip_rss_mb"], _ = best(lambda n: ["zip", "-r", "-6", "-q", os.path.join(target, f"z{n}.zip"), "."], cwd=tree)
    script = "import os,sys,zipfile\nz=zipfile.ZipFile(sys.argv[2],'w',zipfile.ZIP_DEFLATED,compresslevel=6)\nfor r,_,fs in os.walk(sys.argv[1]):\n  for f in sorted(fs): p=os.path.join(r,f); z.write(p,os.path.relpath(p,sys.argv[1]))\nz.close()"
    r["python_s"], r["python_rss_mb"], _ = best(lambda n: [sys.executable, "-c", script, tree, os.path.join(target, f"p{n}.zip")])
    r["ratio_vs_zip"] = r["zip_s"] / r["coursepack_writer_s"]
    r["ratio_vs_python"] = r["python_s"] / r["coursepack_writer_s"]
    r["writer_mb_per_s"] = r["tree_mb"] / r["coursepack_writer_s"]
    return r


def bench_rewriter(name):
    pages = os.path.join(WORK, name, "course", "html")
    files = sorted(os.path.join(pages, f) for f in os.listdir(pages) if f.endswith(".html"))
    _, rss, output = timed([BENCH_BIN, "rewrite"] + files)
    r = json.loads(output)
    return {"mb_per_s": r["bytes"] / 2**20 / r["seconds"], "references": r["references"], "rss_mb": rss, "pages": len(files)}


def settle():
    """ext4 without a journal skips inodes freed in the last 60 seconds (300 while their table
    block is dirty) when it creates files, one by one: right after a compile, which creates and
    deletes thousands of temporary files, every tool that writes many files runs several times
    slower, and by how much varies from run to run. Flush, then wait that window out."""
    seconds = float(os.environ.get("BENCH_SETTLE_SECONDS", "65"))
    os.sync()
    if seconds > 0:
        print(f"waiting {seconds:.0f} s for the file system to settle after the build (BENCH_SETTLE_SECONDS)", flush=True)
        time.sleep(seconds)


def main():
    os.makedirs(WORK, exist_ok=True)
    started = time.time()
    settle()
    results = {"machine": {"cpus": os.cpu_count(), "zip": subprocess.run(["zip", "-v"], capture_output=True, text=True).stdout.splitlines()[1].strip()}}
    results["media_heavy"] = bench_course("media-heavy", 2000, 200)
    results["text_heavy"] = bench_course("text-heavy", 3000, 0)
    results["writer"] = bench_writer("media-heavy")
    results["rewriter"] = bench_rewriter("text-heavy")
    results["bench_seconds"] = time.time() - started
    for name in ("media-heavy", "text-heavy"):
        discard(os.path.join(WORK, name, "runs"))
        discard(os.path.join(WORK, name, "trees"))
    discard(os.path.join(WORK, "writer"))
    shutil.rmtree(TRASH, ignore_errors=True)
    with open(os.path.join(ROOT, "bench/results.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)

    print(f"\ncoursepack benchmark ({results['machine']['cpus']} cores, best of {COURSEPACK_REPEATS} coursepack builds in turns, {REPEATS} runs of the others; ratios = other tool's time / coursepack's; same bytes, same run)\n")
    print(f"{'':34}{'media-heavy':>18}{'text-heavy':>18}")
    m, t = results["media_heavy"], results["text_heavy"]
    rows = [
        ("blocks / input MB", f"{m['blocks']} / {m['input_mb']}", f"{t['blocks']} / {t['input_mb']}"),
        ("coursepack --jobs 1 (s, RSS MB)", f"{m['coursepack_jobs1_s']:.2f}s {m['coursepack_jobs1_rss_mb']:.0f}", f"{t['coursepack_jobs1_s']:.2f}s {t['coursepack_jobs1_rss_mb']:.0f}"),
        (f"coursepack --jobs {m['jobs_all']} (s, RSS MB)", f"{m['coursepack_jobsall_s']:.2f}s {m['coursepack_jobsall_rss_mb']:.0f}", f"{t['coursepack_jobsall_s']:.2f}s {t['coursepack_jobsall_rss_mb']:.0f}"),
        ("  speedup --jobs all / --jobs 1", f"{m['jobs_speedup']:.2f}x", f"{t['jobs_speedup']:.2f}x"),
        ("no-op rebuild (s)", f"{m['noop_rebuild_s']:.2f}s", f"{t['noop_rebuild_s']:.2f}s"),
        ("  ratio to full build --jobs all", f"{m['noop_ratio']:.3f}", f"{t['noop_ratio']:.3f}"),
        ("  stopped at unchanged inputs", "yes" if m["noop_inputs_unchanged"] else "NO", "yes" if t["noop_inputs_unchanged"] else "NO"),
        ("zip -r -6 per block (s)", f"{m['zip_s']:.2f}s", f"{t['zip_s']:.2f}s"),
        ("  vs coursepack --jobs 1", f"{m['ratio_vs_zip_jobs1']:.2f}x", f"{t['ratio_vs_zip_jobs1']:.2f}x"),
        ("zip -r -6 -n media per block (s)", f"{m['zip_store_media_s']:.2f}s", f"{t['zip_store_media_s']:.2f}s"),
        ("  vs coursepack --jobs 1", f"{m['ratio_vs_zip_store_media_jobs1']:.2f}x", f"{t['ratio_vs_zip_store_media_jobs1']:.2f}x"),
        ("python zipfile per block (s)", f"{m['python_s']:.2f}s", f"{t['python_s']:.2f}s"),
        ("  vs coursepack --jobs 1", f"{m['ratio_vs_python_jobs1']:.2f}x", f"{t['ratio_vs_python_jobs1']:.2f}x"),
        ("sync all from loopback nginx (s)", f"{m['sync_s']:.2f}s", f"{t['sync_s']:.2f}s"),
        ("  MB/s, RSS MB", f"{m['sync_mb_per_s']:.0f} {m['sync_rss_mb']:.0f}", f"{t['sync_mb_per_s']:.0f} {t['sync_rss_mb']:.0f}"),
        ("peak RSS of any coursepack run (MB)", f"{max(m['coursepack_jobs1_rss_mb'], m['coursepack_jobsall_rss_mb'], m['noop_rebuild_rss_mb']):.0f}", f"{max(t['coursepack_jobs1_rss_mb'], t['coursepack_jobsall_rss_mb'], t['noop_rebuild_rss_mb']):.0f}"),
    ]
    for label, a, b in rows:
        print(f"{label:34}{a:>18}{b:>18}")
    w = results["writer"]
    print(f"\nZIP writer alone, one archive of the media-heavy export ({w['tree_mb']} MB):")
    print(f"  coursepack {w['coursepack_writer_s']:.2f}s ({w['writer_mb_per_s']:.0f} MB/s, RSS {w['coursepack_writer_rss_mb']:.0f} MB); "
          f"zip -r -6 {w['zip_s']:.2f}s ({w['ratio_vs_zip']:.2f}x); python zipfile {w['python_s']:.2f}s ({w['ratio_vs_python']:.2f}x)")
    rw = results["rewriter"]
    print(f"LinkRewriter alone, one core: {rw['mb_per_s']:.0f} MB/s of HTML ({rw['pages']} pages)")
    print(f"\nresults written to bench/results.json ({results['bench_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
