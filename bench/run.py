#!/usr/bin/env python3
"""`make bench`: builds two courses with coursepack and, in the same run, on the same bytes,
runs the honest baselines: one `zip -r -6 -n <media>` process and one `zip -r -6` process over
the per-block trees coursepack wrote (unpacked), a one-process Python packager that stores media
and hashes each archive, `curl --parallel` + `sha256sum` + `unzip` for sync. Every timing is the
best of several runs taken in turns. Prints a table of the targets of issue 33 with PASS/MISS, the machine's floor beside them,
and writes bench/results.json. Then, as a line of its own, the Open edX plugin's burst: courses
per minute when many courses are published at once (`python3 bench/run.py --plugin-burst`
measures only that, with COURSEPACK_BIN or the release coursepack).

Environment: BENCH_ROUNDS (turns, default 3), BENCH_PROPERTY_EDITS (random edits of the property
test, default 300; 0 skips it), BENCH_LARGE_VIDEO_MB (the peak-memory course, default 1024),
BENCH_SETTLE_SECONDS, BENCH_WORK, BENCH_BURST_COURSES (default 20), BENCH_BURST_WORKERS (default 2)."""
import json, os, shutil, subprocess, sys, time, zipfile

from nginx import Nginx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, ".build/release/coursepack")
BENCH_BIN = os.path.join(ROOT, ".build/release/coursepack-bench")
WORK = os.environ.get("BENCH_WORK") or os.path.join(ROOT, "bench/work")
DEMO = os.environ.get("BENCH_DEMO_COURSE") or os.path.join(ROOT, "../shared/corpus/openedx-demo-course/course")
# The extensions coursepack stores (Sources/ZipArchive/CompressionPolicy.swift): zip -n and the
# Python packager store the same files, so all three do the same work.
STORED = ("png jpg jpeg gif webp avif heic ico mp4 m4v mov webm mkv avi ogv mp3 m4a aac ogg oga opus flac wav "
          "pdf woff woff2 zip gz tgz bz2 xz zst 7z rar docx xlsx pptx epub jar apk").split()
MEDIA_SUFFIXES = ":".join("." + e for e in STORED)
# Where a build publishes each content once (Sources/Manifest: CourseFile.folder).
COURSE_FILES = "files"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PROPERTY_EDITS = int(os.environ.get("BENCH_PROPERTY_EDITS", "300"))
LARGE_VIDEO_MB = int(os.environ.get("BENCH_LARGE_VIDEO_MB", "1024"))
STAMP = "2026-11-22T10:00:00Z"
MEDIA_COURSE = ["--demo", DEMO, "--copies", "4", "--media-mb", "200"]
TEXT_COURSE = ["--blocks", "3000", "--media-mb", "0"]
LARGE_VIDEO_COURSE = ["--blocks", "8", "--video-mb", str(LARGE_VIDEO_MB)]
CPUS = os.cpu_count() or 1


def timed(command, cwd=None):
    """Runs a command under /usr/bin/time; returns (seconds, peak RSS in MB, stdout)."""
    started = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(command)}\n{result.stderr[-3000:]}")
    rss_kb = int(result.stderr.strip().splitlines()[-1])
    return seconds, rss_kb / 1024, result.stdout


def interleaved(commands, rounds):
    """Runs every command once per round, in turns (a, b, c, a, b, c, ...), so a slow spell of
    the shared machine falls on all of them alike. Each value is a function of the round giving
    the command (it may prepare the round's input). Returns label -> (best s, peak RSS MB)."""
    runs = {label: [] for label in commands}
    for n in range(rounds):
        for label, command in commands.items():
            # Every tool starts with the previous run's writes on disk, not still being flushed.
            os.sync()
            runs[label].append(timed(command(n)))
    return {label: (min(r[0] for r in rs), max(r[1] for r in rs)) for label, rs in runs.items()}


TRASH = os.path.join(WORK, "trash")


def discard(path):
    """Moves `path` aside, to be deleted when the bench is over: on ext4 without a journal,
    creating files soon after many were deleted is several times slower (recently freed
    inodes are skipped one by one), which would slow whichever tool ran next."""
    if os.path.lexists(path):
        os.makedirs(TRASH, exist_ok=True)
        os.rename(path, os.path.join(TRASH, f"{len(os.listdir(TRASH))}-{os.path.basename(path)}"))


def fresh(path):
    discard(path)
    os.makedirs(path)
    return path


def unused(path):
    """A new, empty folder (see `discard`)."""
    os.makedirs(path)
    return path


def warm(folder):
    for root, _, files in os.walk(folder):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                while f.read(1 << 20):
                    pass


def archives(out):
    return [b for b in json.load(open(os.path.join(out, "manifest.json")))["blocks"] if "archive" in b]


def extract_trees(out, trees):
    """The per-block file trees the other packagers get: exactly what coursepack bundled."""
    fresh(trees)
    for block in archives(out):
        with zipfile.ZipFile(os.path.join(out, block["archive"])) as z:
            z.extractall(os.path.join(trees, block["archive"][:-4]))


def folder_size(folder):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(folder) for f in fs)


# Bumped when generate_course.py makes different courses: a course left by an older generator
# (media without their format's header, before 2) is generated again, not measured.
GENERATOR_VERSION = "2"


def generate(course, *arguments):
    stamp = os.path.join(os.path.dirname(course), "generator-version")
    current = open(stamp).read().strip() if os.path.exists(stamp) else None
    if current != GENERATOR_VERSION or not os.path.exists(os.path.join(course, "course.xml")):
        discard(course)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench/generate_course.py"), course, *arguments],
                       check=True, stdout=subprocess.DEVNULL)
        with open(stamp, "w") as f:
            f.write(GENERATOR_VERSION + "\n")


# The sync baseline: what a shell script does with standard tools. The manifest is fetched, every
# archive downloaded by one `curl --parallel`, checked by one `sha256sum -c`, and unpacked into
# its own folder by `unzip`, one process per archive, as many at once as there are cores.
SYNC_BASELINE = r'''set -e
url=$1; to=$2; cores=$3
mkdir -p "$to" && cd "$to"
curl -sf -o manifest.json "$url/manifest.json"
python3 - "$url" <<'EOF'
import json, sys
manifest = json.load(open("manifest.json"))
blocks = [b for b in manifest["blocks"] if "archive" in b] + ([manifest["runtime"]] if manifest.get("runtime") else [])
with open("curl.cfg", "w") as f:
    for b in blocks:
        f.write(f'url = "{sys.argv[1]}/{b["archive"]}"\noutput = "{b["archive"]}"\n')
with open("sums", "w") as f:
    f.writelines(f'{b["sha256"]}  {b["archive"]}\n' for b in blocks)
with open("unpack", "w") as f:
    f.writelines(f'{b["archive"]} -d {b["archive"][:-4]}\n' for b in blocks)
EOF
curl -sf --no-progress-meter --parallel --parallel-max 16 --create-dirs -K curl.cfg
sha256sum -c --quiet sums
xargs -P "$cores" -n 3 unzip -q -o < unpack
'''


def bench_course(name, generator_arguments, edits, media):
    """Full builds (--jobs 1 and all cores) in turns with the packaging baselines, then no-op
    (and, with `edits`, one-page edit) rebuilds in turns, then sync against its baseline."""
    base = os.path.join(WORK, name)
    course, out, trees = f"{base}/course", f"{base}/out", f"{base}/trees"
    generate(course, *generator_arguments)
    warm(course)
    r = {"course": name, "input_mb": round(folder_size(course) / 2**20, 1), "jobs_all": CPUS}
    r["input_media_bytes"], r["input_text_bytes"] = split_bytes(course)
    runs = fresh(f"{base}/runs")

    # The trees every baseline packages are the bytes of a first coursepack build.
    first = unused(f"{runs}/first")
    timed([BIN, "build", course, "--out", first, "-q", "--published-at", STAMP])
    extract_trees(first, trees)
    warm(trees)
    blocks = archives(first)
    r["archives"] = len(blocks)
    r["output_mb"] = round(sum(b["size"] for b in blocks) / 2**20, 1)
    r["tree_mb"] = round(folder_size(trees) / 2**20, 1)

    build = lambda label, jobs: lambda n: [BIN, "build", course, "--out", unused(f"{runs}/{label}-{n}"), "--jobs", str(jobs), "-q", "--published-at", STAMP]
    zip_tree = 'cd "$1" && exec zip -r -6 -q $3 "$2" .'
    zip_all = lambda n: ["bash", "-c", zip_tree, "-", trees, f"{runs}/zip-{n}.zip", ""]
    python = lambda n: [sys.executable, os.path.join(ROOT, "bench/python_packager.py"), trees, unused(f"{runs}/python-{n}")]
    commands = {"coursepack_jobs1": build("j1", 1), "coursepack_jobsall": build("jall", CPUS)}
    # In turns with coursepack: the baselines its targets are measured against. The media
    # course's targets are zip -n and the Python packager; the text course's is zip -r -6
    # (without media, -n changes nothing).
    if media:
        commands["zip_store_media"] = lambda n: ["bash", "-c", zip_tree, "-", trees, f"{runs}/zipn-{n}.zip", "-n " + MEDIA_SUFFIXES]
        commands["python"] = python
    else:
        commands["zip"] = zip_all
    full = interleaved(commands, ROUNDS)
    for label, (seconds, rss) in full.items():
        r[f"{label}_s"], r[f"{label}_rss_mb"] = seconds, rss
    # What each packager wrote: on a machine where writing a byte into a new page costs more
    # than anything else done to it, the bytes written bound each one's time.
    r["written_mb"] = {"coursepack": round(folder_size(f"{runs}/j1-0") / 2**20, 1),
                       "coursepack_course_files": round(folder_size(f"{runs}/j1-0/{COURSE_FILES}") / 2**20, 1)}
    if media:
        r["written_mb"]["zip_store_media"] = round(os.path.getsize(f"{runs}/zipn-0.zip") / 2**20, 1)
        r["written_mb"]["python"] = round(folder_size(f"{runs}/python-0") / 2**20, 1)
    else:
        r["written_mb"]["zip"] = round(os.path.getsize(f"{runs}/zip-0.zip") / 2**20, 1)
    # zip -r -6 of the media course, once, for the record: no target depends on it, and it
    # takes many times longer than coursepack (it deflates the video).
    if media:
        os.sync()
        r["zip_s"], r["zip_rss_mb"], _ = timed(zip_all(ROUNDS))
    else:
        r["zip_store_media_s"], r["zip_store_media_rss_mb"] = r["zip_s"], r["zip_rss_mb"]

    # Rebuilds start from a complete publish; its build state moves with it.
    discard(out)
    discard(out + ".coursepack-state")
    os.rename(f"{runs}/jall-0", out)
    os.rename(f"{runs}/jall-0.coursepack-state", out + ".coursepack-state")
    report = f"{runs}/rebuild-report.json"
    rebuild = [BIN, "build", course, "--out", out, "-q", "--published-at", STAMP, "--report", report]
    checks = {}

    def noop(n):
        return rebuild

    def edit(n):
        # A different page each round, one paragraph added: what an author's fix looks like.
        pages = sorted(f for f in os.listdir(f"{course}/html") if f.endswith(".html"))
        page = f"{course}/html/{pages[(n * 997) % len(pages)]}"
        with open(page, "a") as f:
            f.write(f"\n<p>Corrected in round {n}.</p>\n")
        return rebuild

    rebuilds = {"noop": noop}
    if edits:
        rebuilds["edit"] = edit
    # The report of each rebuild says what it did; read it right after each run.
    results = {label: [] for label in rebuilds}
    for n in range(ROUNDS):
        for label, command in rebuilds.items():
            os.sync()
            results[label].append(timed(command(n)))
            rep = json.load(open(report))
            checks.setdefault(label, []).append({"built": rep["counts"]["built"], "inputs_unchanged": rep.get("inputs_unchanged", False)})
    for label, rs in results.items():
        r[f"{label}_rebuild_s"] = min(x[0] for x in rs)
        r[f"{label}_rebuild_rss_mb"] = max(x[1] for x in rs)
        r[f"{label}_ratio"] = r[f"{label}_rebuild_s"] / r["coursepack_jobsall_s"]
    # Whether every no-op rebuild stopped at unchanged inputs (the report's inputs_unchanged).
    r["noop_inputs_unchanged"] = all(c["inputs_unchanged"] for c in checks["noop"])
    if edits:
        r["edit_blocks_built"] = max(c["built"] for c in checks["edit"])

    r["ratio_vs_zip_store_media_jobs1"] = r["zip_store_media_s"] / r["coursepack_jobs1_s"]
    r["ratio_vs_zip_jobs1"] = r["zip_s"] / r["coursepack_jobs1_s"]
    if "python_s" in r:
        r["ratio_vs_python_jobs1"] = r["python_s"] / r["coursepack_jobs1_s"]
    r["jobs_speedup"] = r["coursepack_jobs1_s"] / r["coursepack_jobsall_s"]
    return r


def bench_sync(name):
    """`coursepack sync` of a published folder from loopback nginx, in turns with the baseline."""
    base = os.path.join(WORK, name)
    out, runs = f"{base}/out", f"{base}/runs"
    server = Nginx(out)
    try:
        # A crashing sync is reported as such, and the rest of the bench still runs.
        sync = interleaved({
            "coursepack_sync": lambda n: [BIN, "sync", server.url, "--to", unused(f"{runs}/device-{n}")],
            "baseline_sync": lambda n: ["bash", "-c", SYNC_BASELINE, "-", server.url, f"{runs}/baseline-{n}", str(CPUS)],
        }, ROUNDS)
    except SystemExit as failure:
        return {"error": str(failure)[:600]}
    finally:
        server.stop()
    r = {}
    for label, (seconds, rss) in sync.items():
        r[f"{label}_s"], r[f"{label}_rss_mb"] = seconds, rss
    r["sync_ratio"] = r["baseline_sync_s"] / r["coursepack_sync_s"]
    r["sync_mb_per_s"] = sum(b["size"] for b in archives(out)) / 2**20 / r["coursepack_sync_s"]
    return r


def bench_large_video():
    """Peak memory with one very large media file: a build at --jobs 1 and all cores, a no-op
    rebuild and a sync, each once."""
    base = os.path.join(WORK, "large-video")
    course = f"{base}/course"
    generate(course, *LARGE_VIDEO_COURSE)
    runs = fresh(f"{base}/runs")
    r = {"video_mb": LARGE_VIDEO_MB}
    build = lambda folder, jobs: [BIN, "build", course, "--out", folder, "--jobs", str(jobs), "-q", "--published-at", STAMP]
    r["build_jobs1_s"], r["build_jobs1_rss_mb"], _ = timed(build(f"{runs}/j1", 1))
    discard(f"{runs}/j1")
    r["build_jobsall_s"], r["build_jobsall_rss_mb"], _ = timed(build(f"{runs}/jall", CPUS))
    r["noop_s"], r["noop_rss_mb"], _ = timed(build(f"{runs}/jall", CPUS))
    server = Nginx(f"{runs}/jall")
    try:
        r["sync_s"], r["sync_rss_mb"], _ = timed([BIN, "sync", server.url, "--to", unused(f"{runs}/device")])
    except SystemExit as failure:
        r["sync_error"] = str(failure)[:600]
    finally:
        server.stop()
    return r


def bench_property():
    """The incremental-build property test with many more random edits than `make test` runs,
    in the release build (`coursepack-bench property`): the same check, no debug build."""
    if PROPERTY_EDITS <= 0:
        return {"skipped": True}
    started = time.perf_counter()
    result = subprocess.run([BENCH_BIN, "property", str(PROPERTY_EDITS)], cwd=ROOT, capture_output=True, text=True)
    r = {"edits": PROPERTY_EDITS, "test_s": time.perf_counter() - started, "passed": result.returncode == 0}
    try:
        report = json.loads(result.stdout)
        r["edits"], r["kinds"] = report["edits"], report["kinds"]
        if report["failures"]:
            r["output"] = "\n".join(report["failures"])
    except (ValueError, KeyError):
        r["passed"] = False
        r["output"] = (result.stdout + result.stderr)[-4000:]
    return r


def bench_writer(name):
    """The ZIP writer alone on one mixed tree (the media course's export: XML, HTML, media)."""
    tree = os.path.join(WORK, name, "course")
    target = fresh(os.path.join(WORK, "writer"))
    r = {"tree_mb": round(folder_size(tree) / 2**20, 1)}
    timings = interleaved({
        "coursepack_writer": lambda n: [BENCH_BIN, "zip", tree, os.path.join(target, f"w{n}.zip")],
        "zip": lambda n: ["bash", "-c", 'cd "$1" && exec zip -r -6 -q -n "$3" "$2" .', "-", tree, os.path.join(target, f"z{n}.zip"), MEDIA_SUFFIXES],
    }, ROUNDS)
    for label, (seconds, rss) in timings.items():
        r[f"{label}_s"], r[f"{label}_rss_mb"] = seconds, rss
    r["ratio_vs_zip"] = r["zip_s"] / r["coursepack_writer_s"]
    r["writer_mb_per_s"] = r["tree_mb"] / r["coursepack_writer_s"]
    return r


def bench_rewriter(name):
    pages = os.path.join(WORK, name, "course", "html")
    files = sorted(os.path.join(pages, f) for f in os.listdir(pages) if f.endswith(".html"))
    _, rss, output = timed([BENCH_BIN, "rewrite"] + files)
    r = json.loads(output)
    return {"mb_per_s": r["bytes"] / 2**20 / r["seconds"], "references": r["references"], "rss_mb": rss, "pages": len(files)}


def split_bytes(course):
    """(media, text) bytes of a course folder, by the extensions coursepack stores."""
    media = text = 0
    for root, _, files in os.walk(course):
        for name in files:
            size = os.path.getsize(os.path.join(root, name))
            if os.path.splitext(name)[1][1:].lower() in STORED:
                media += size
            else:
                text += size
    return media, text


def bench_floor():
    """What this machine can do at best on the bench courses' bytes, in the same run: one `cp`
    of the media course's files (coreutils copies with copy_file_range), and, timed in-process by
    `coursepack-bench floor` with the calls coursepack makes, a page-cache read and a kernel copy
    of its media, SHA-256 (swift-crypto) and CRC-32 (zlib) over them, and deflate at level 6
    (zlib) over the text course. Best of ROUNDS."""
    media_course, text_course = os.path.join(WORK, "media-heavy", "course"), os.path.join(WORK, "text-heavy", "course")
    scratch = fresh(os.path.join(WORK, "floor"))
    # The media files alone, listed (not linked: coursepack refuses files with a second name).
    media = sorted(os.path.relpath(os.path.join(root, name), media_course) for root, _, files in os.walk(media_course)
                   for name in files if os.path.splitext(name)[1][1:].lower() in STORED)
    listing = os.path.join(scratch, "media-files")
    with open(listing, "w") as f:
        f.writelines(os.path.join(media_course, m) + "\n" for m in media)
    warm(media_course)
    warm(text_course)
    copy = 'cd "$1" && shift && exec cp --parents -t "$@"'
    cp = interleaved({"cp": lambda n: ["bash", "-c", copy, "-", media_course, unused(os.path.join(scratch, f"cp-{n}")), *media]}, ROUNDS)
    result = subprocess.run([BENCH_BIN, "floor", listing, text_course, os.path.join(scratch, "kernel"), str(ROUNDS)],
                            capture_output=True, text=True, check=True)
    rates = json.loads(result.stdout)
    media_bytes = sum(os.path.getsize(os.path.join(media_course, m)) for m in media)
    r = {name: {"mb_per_s": rate["mb_per_s"], "bytes": int(rate["bytes"]), "seconds": rate["seconds"]} for name, rate in rates.items()}
    r["cp"] = {"mb_per_s": media_bytes / 2**20 / cp["cp"][0], "bytes": media_bytes, "seconds": cp["cp"][0]}
    # The fastest way this machine copies the media: cp or copy_file_range.
    r["copy_mb_per_s"] = max(r["cp"]["mb_per_s"], r["copy_file_range"]["mb_per_s"])
    return r


def stage_floors(results):
    """A lower bound for each stage, from the floor's rates: what coursepack must do at least.
    A build writes every byte once (at the copy rate), hashes the output once for the manifest
    (SHA-256) and checksums it for ZIP (CRC-32), and deflates the text once; --jobs N divides
    that by N at best. A sync hashes what it downloads and writes it once."""
    f, m, t = results["floor"], results["media_heavy"], results["text_heavy"]
    mb = lambda rate: rate * 2**20
    copy, sha, crc, deflate = mb(f["copy_mb_per_s"]), mb(f["sha256"]["mb_per_s"]), mb(f["crc32"]["mb_per_s"]), mb(f["deflate"]["mb_per_s"])
    def build(course):
        media, text = course["input_media_bytes"], course["input_text_bytes"]
        return media / copy + (media + text) / sha + (media + text) / crc + text / deflate
    output = m["output_mb"] * 2**20
    floors = {
        "media_jobs1": build(m), "media_jobsall": build(m) / CPUS,
        "text_jobs1": build(t), "text_jobsall": build(t) / CPUS,
        "media_sync": output / sha + output / copy,
    }
    # The same work at the bytes each build writes (coursepack: the course files its own
    # clients download and the self-contained archives the official apps do, so media twice).
    for name, course in (("media", m), ("text", t)):
        rest = build(course) - course["input_media_bytes"] / copy
        floors[f"{name}_jobs1_written"] = course["written_mb"]["coursepack"] * 2**20 / copy + rest
        floors[f"{name}_jobsall_written"] = floors[f"{name}_jobs1_written"] / CPUS
    return floors


def settle(started):
    """ext4 without a journal skips inodes freed in the last 60 seconds (300 while their table
    block is dirty) when it creates files, one by one: right after a compile, which creates and
    deletes thousands of temporary files, every tool that writes many files runs several times
    slower, and by how much varies from run to run. Flush, then wait that window out."""
    seconds = float(os.environ.get("BENCH_SETTLE_SECONDS", "65"))
    os.sync()
    # The courses were generated meanwhile (they only create files): wait what is left.
    left = seconds - (time.time() - started)
    if left > 0:
        print(f"waiting {left:.0f} s more for the file system to settle after the build (BENCH_SETTLE_SECONDS)", flush=True)
        time.sleep(left)


def verdict(ok):
    return "PASS" if ok else "MISS"


def table(results):
    m, t, s, v, p = results["media_heavy"], results["text_heavy"], results["media_sync"], results["large_video"], results["property"]
    rss = {
        "media-heavy builds, rebuilds": max(m["coursepack_jobs1_rss_mb"], m["coursepack_jobsall_rss_mb"], m["noop_rebuild_rss_mb"]),
        "text-heavy builds, rebuilds": max(t["coursepack_jobs1_rss_mb"], t["coursepack_jobsall_rss_mb"], t["noop_rebuild_rss_mb"], t.get("edit_rebuild_rss_mb", 0)),
        "media-heavy sync": s.get("coursepack_sync_rss_mb", 0),
        f"{v['video_mb']} MB video: builds, no-op, sync": max(v["build_jobs1_rss_mb"], v["build_jobsall_rss_mb"], v["noop_rss_mb"], v.get("sync_rss_mb", 0)),
    }
    peak = max(rss.values())
    rows = [
        ("media-heavy --jobs 1 vs one zip -r -6 -n", ">= 2.0x", f"{m['zip_store_media_s']:.2f}s / {m['coursepack_jobs1_s']:.2f}s = {m['ratio_vs_zip_store_media_jobs1']:.2f}x", m["ratio_vs_zip_store_media_jobs1"] >= 2.0),
        ("media-heavy --jobs 1 vs Python packager", ">= 2.0x", f"{m['python_s']:.2f}s / {m['coursepack_jobs1_s']:.2f}s = {m['ratio_vs_python_jobs1']:.2f}x", m["ratio_vs_python_jobs1"] >= 2.0),
        ("text-heavy --jobs 1 vs one zip -r -6", ">= 2.0x", f"{t['zip_s']:.2f}s / {t['coursepack_jobs1_s']:.2f}s = {t['ratio_vs_zip_jobs1']:.2f}x", t["ratio_vs_zip_jobs1"] >= 2.0),
        (f"text-heavy --jobs {CPUS} vs --jobs 1", ">= 1.8x", f"{t['coursepack_jobs1_s']:.2f}s / {t['coursepack_jobsall_s']:.2f}s = {t['jobs_speedup']:.2f}x", t["jobs_speedup"] >= 1.8),
        ("text-heavy one-page edit / full build", "<= 0.10", f"{t['edit_rebuild_s']:.3f}s / {t['coursepack_jobsall_s']:.2f}s = {t['edit_ratio']:.3f} ({t['edit_blocks_built']} built)", t["edit_ratio"] <= 0.10),
        ("text-heavy no-op / full build", "<= 0.05", f"{t['noop_rebuild_s']:.3f}s / {t['coursepack_jobsall_s']:.2f}s = {t['noop_ratio']:.3f}", t["noop_ratio"] <= 0.05),
        ("media-heavy sync vs curl+sha256sum+unzip", ">= 4.0x",
         "coursepack sync failed (see below)" if "error" in s else f"{s['baseline_sync_s']:.2f}s / {s['coursepack_sync_s']:.2f}s = {s['sync_ratio']:.2f}x",
         s.get("sync_ratio", 0) >= 4.0),
        ("peak RSS of every coursepack run", "< 200 MB", f"{peak:.0f} MB (incl. a {v['video_mb']} MB video)", peak < 200),
        ("property test, random edits", f">= 300", "skipped" if p.get("skipped") else f"{p['edits']} edits, {'passed' if p['passed'] else 'FAILED'} ({p['test_s']:.0f}s)", bool(p.get("passed")) and p.get("edits", 0) >= 300),
    ]
    print(f"\ncoursepack benchmark, issue 33 targets (acceptance check speed-vs-zip) ({CPUS} cores; best of {ROUNDS} runs in turns; ratio = baseline time / coursepack time; same bytes, same run)\n")
    print(f"{'target':44}{'goal':>10}  {'measured':52}result")
    for label, goal, measured, ok in rows:
        print(f"{label:44}{goal:>10}  {measured:52}{verdict(ok)}")

    print(f"\n{'details':44}{'media-heavy':>22}{'text-heavy':>22}")
    detail = [
        ("archives / output MB / tree MB", lambda c: f"{c['archives']} / {c['output_mb']:.0f} / {c['tree_mb']:.0f}"),
        ("coursepack --jobs 1 (s, RSS MB)", lambda c: f"{c['coursepack_jobs1_s']:.2f}s {c['coursepack_jobs1_rss_mb']:.0f}"),
        (f"coursepack --jobs {CPUS} (s, RSS MB)", lambda c: f"{c['coursepack_jobsall_s']:.2f}s {c['coursepack_jobsall_rss_mb']:.0f}"),
        ("one zip -r -6 -n media (s)", lambda c: f"{c['zip_store_media_s']:.2f}s {c['ratio_vs_zip_store_media_jobs1']:.2f}x"),
        ("one zip -r -6 (s; media: once)", lambda c: f"{c['zip_s']:.2f}s {c['ratio_vs_zip_jobs1']:.2f}x"),
        ("Python packager (s)", lambda c: f"{c['python_s']:.2f}s {c['ratio_vs_python_jobs1']:.2f}x" if "python_s" in c else "-"),
        ("speedup --jobs all / --jobs 1", lambda c: f"{c['jobs_speedup']:.2f}x"),
        ("no-op rebuild (s, ratio)", lambda c: f"{c['noop_rebuild_s']:.3f}s {c['noop_ratio']:.3f}"),
        ("no-op stopped at unchanged inputs", lambda c: "yes" if c["noop_inputs_unchanged"] else "not every time"),
        ("one-page edit rebuild (s, ratio)", lambda c: f"{c['edit_rebuild_s']:.3f}s {c['edit_ratio']:.3f}" if "edit_rebuild_s" in c else "-"),
    ]
    for label, cell in detail:
        print(f"{label:44}{cell(m):>22}{cell(t):>22}")
    if "error" in s:
        print(f"\nsync of media-heavy from loopback nginx: NOT MEASURED, {s['error']}")
    else:
        print(f"\nsync of media-heavy from loopback nginx: coursepack {s['coursepack_sync_s']:.2f}s ({s['sync_mb_per_s']:.0f} MB/s, RSS {s['coursepack_sync_rss_mb']:.0f} MB); "
              f"curl --parallel + sha256sum + unzip {s['baseline_sync_s']:.2f}s")
    video_sync = f"sync failed: {v['sync_error'][:200]}" if "sync_error" in v else f"sync {v['sync_s']:.1f}s"
    print(f"{v['video_mb']} MB video: build --jobs 1 {v['build_jobs1_s']:.1f}s, --jobs {CPUS} {v['build_jobsall_s']:.1f}s, {video_sync}")
    print("peak RSS (MB): " + ", ".join(f"{k} {x:.0f}" for k, x in rss.items()))
    w = results["writer"]
    print(f"ZIP writer alone, one archive of the media-heavy export ({w['tree_mb']} MB): coursepack {w['coursepack_writer_s']:.2f}s "
          f"({w['writer_mb_per_s']:.0f} MB/s), zip -r -6 -n {w['zip_s']:.2f}s ({w['ratio_vs_zip']:.2f}x)")
    rw = results["rewriter"]
    print(f"LinkRewriter alone, one core: {rw['mb_per_s']:.0f} MB/s of HTML ({rw['pages']} pages)")
    if p.get("output"):
        print("\nproperty test output:\n" + p["output"])


def print_floor(results):
    f, floors, m, t, s = results["floor"], results["stage_floors"], results["media_heavy"], results["text_heavy"], results["media_sync"]
    print(f"\nthe machine's floor (best of {ROUNDS}, same bytes): copy {f['cp']['mb_per_s']:.0f} MB/s (cp of the media course's "
          f"{f['cp']['bytes'] / 2**20:.0f} MB of media), {f['copy_file_range']['mb_per_s']:.0f} MB/s (copy_file_range); page-cache read "
          f"{f['read']['mb_per_s']:.0f} MB/s; SHA-256 {f['sha256']['mb_per_s']:.0f} MB/s (swift-crypto); CRC-32 {f['crc32']['mb_per_s']:.0f} MB/s (zlib); "
          f"deflate level 6 {f['deflate']['mb_per_s']:.0f} MB/s (zlib, text course, {f['deflate']['bytes'] / 2**20:.0f} MB)")
    print("each stage's floor: media copied once, every byte hashed once (SHA-256) and checksummed once (CRC-32), text deflated once; "
          f"--jobs {CPUS} divides it by {CPUS}")
    stages = [
        ("media-heavy build --jobs 1", m["coursepack_jobs1_s"], floors["media_jobs1"], floors["media_jobs1_written"]),
        (f"media-heavy build --jobs {CPUS}", m["coursepack_jobsall_s"], floors["media_jobsall"], floors["media_jobsall_written"]),
        ("text-heavy build --jobs 1", t["coursepack_jobs1_s"], floors["text_jobs1"], floors["text_jobs1_written"]),
        (f"text-heavy build --jobs {CPUS}", t["coursepack_jobsall_s"], floors["text_jobsall"], floors["text_jobsall_written"]),
    ]
    for label, seconds, floor, written in stages:
        print(f"  {label:44}coursepack {seconds:.2f} s, floor {floor:.2f} s ({seconds / floor:.1f}x the floor); "
              f"{written:.2f} s at the bytes it writes ({seconds / written:.1f}x)")
    if "coursepack_sync_s" in s:
        print(f"  {'media-heavy sync (network not counted)':44}coursepack {s['coursepack_sync_s']:.2f} s, floor {floors['media_sync']:.2f} s "
              f"({s['coursepack_sync_s'] / floors['media_sync']:.1f}x the floor)")
    copy = f["copy_mb_per_s"]
    mw, tw = m["written_mb"], t["written_mb"]
    print(f"bytes written, MB (the first run of each): media-heavy coursepack {mw['coursepack']:.0f} "
          f"({mw['coursepack_course_files']:.0f} of them course files, beside archives that hold their media again), "
          f"one zip -n {mw['zip_store_media']:.0f}, Python packager {mw['python']:.0f}; "
          f"text-heavy coursepack {tw['coursepack']:.0f} ({tw['coursepack_course_files']:.0f} course files), one zip {tw['zip']:.0f}. "
          f"At the copy rate ({copy:.0f} MB/s) writing them alone takes: media coursepack {mw['coursepack'] / copy:.2f} s, "
          f"zip -n {mw['zip_store_media'] / copy:.2f} s; a 2x zip -n target asks for coursepack in {m['zip_store_media_s'] / 2:.2f} s")


PLUGIN = os.path.join(ROOT, "integrations", "openedx")
BURST_COURSES = int(os.environ.get("BENCH_BURST_COURSES", "20"))
BURST_WORKERS = int(os.environ.get("BENCH_BURST_WORKERS", "2"))


def bench_plugin_burst(binary=BIN):
    """Many courses at once (issue 33): the Open edX plugin's harness (integrations/openedx/
    tests/burst.py) publishes BURST_COURSES copies of the demo course in one burst of
    openedx-events signals to a `celery worker` of BURST_WORKERS prefork processes over a real
    redis-server, each course built and published by `binary`. Needs the plugin's Python
    dependencies (pip install -e 'integrations/openedx[test]') and redis-server."""
    command = [sys.executable, "-m", "tests.burst", "--courses", str(BURST_COURSES), "--workers", str(BURST_WORKERS),
               "--binary", binary]
    result = subprocess.run(command, cwd=PLUGIN, capture_output=True, text=True)
    if result.returncode != 0:
        return {"error": (result.stderr.strip() or result.stdout.strip())[-1500:], "command": " ".join(command)}
    return json.loads(result.stdout.strip().splitlines()[-1])


def print_plugin_burst(burst):
    if "error" in burst:
        print(f"\nplugin burst: NOT MEASURED ({burst['command']} failed): {burst['error']}")
        return
    print(f"\nplugin burst: {burst['courses']} demo-course copies published at once, {burst['workers']} Celery worker "
          f"processes over redis: {burst['courses_per_minute']} courses/min ({burst['builds']} builds in {burst['seconds']} s; "
          f"{burst['courses_per_minute_from_first_event']} courses/min counting the {burst['debounce_seconds']:g} s debounce window)")


def main():
    if sys.argv[1:] == ["--plugin-burst"]:
        # Only the plugin's burst, with whichever coursepack is built (COURSEPACK_BIN to choose).
        print_plugin_burst(bench_plugin_burst(os.environ.get("COURSEPACK_BIN", BIN)))
        return
    started = time.time()
    os.makedirs(WORK, exist_ok=True)
    generate(os.path.join(WORK, "media-heavy", "course"), *MEDIA_COURSE)
    generate(os.path.join(WORK, "text-heavy", "course"), *TEXT_COURSE)
    generate(os.path.join(WORK, "large-video", "course"), *LARGE_VIDEO_COURSE)
    settle(started)
    results = {"machine": {"cpus": CPUS, "zip": subprocess.run(["zip", "-v"], capture_output=True, text=True).stdout.splitlines()[1].strip()}}
    results["media_heavy"] = bench_course("media-heavy", MEDIA_COURSE, edits=False, media=True)
    results["media_sync"] = bench_sync("media-heavy")
    results["text_heavy"] = bench_course("text-heavy", TEXT_COURSE, edits=True, media=False)
    results["writer"] = bench_writer("media-heavy")
    results["rewriter"] = bench_rewriter("text-heavy")
    results["large_video"] = bench_large_video()
    results["floor"] = bench_floor()
    results["stage_floors"] = stage_floors(results)
    for name in ("media-heavy", "text-heavy", "large-video"):
        discard(os.path.join(WORK, name, "runs"))
        discard(os.path.join(WORK, name, "trees"))
    # The edited pages go with the text course: the next bench generates it afresh.
    discard(os.path.join(WORK, "text-heavy", "course"))
    discard(os.path.join(WORK, "writer"))
    discard(os.path.join(WORK, "floor"))
    shutil.rmtree(TRASH, ignore_errors=True)
    results["property"] = bench_property()
    results["plugin_burst"] = bench_plugin_burst()
    results["bench_seconds"] = time.time() - started
    with open(os.path.join(ROOT, "bench/results.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
    table(results)
    print_floor(results)
    print_plugin_burst(results["plugin_burst"])
    print(f"\nresults written to bench/results.json; bench/run.py took {results['bench_seconds']:.0f} s")


if __name__ == "__main__":
    main()
