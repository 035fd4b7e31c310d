"""Many courses at once: copies of the demo course under their own course ids, published in a
burst of real openedx-events signals, built by real Celery worker processes (`celery worker
--concurrency N`, prefork) over a real redis-server that is both the broker and Django's cache
(the debounce windows and the per-course locks). The coursepack binary is wrapped by a script
that logs when each build and publish starts and ends, in which worker process, and which
version of the course it builds, so that overlaps, parallelism and the order of versions can be
checked afterwards.

Used by test_burst.py, and by `make bench` (bench/run.py) through the command line:

    python3 -m tests.burst --courses 20 --workers 2 [--binary .build/release/coursepack]

which prints one line of JSON (courses per minute among it)."""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(HERE)
ROOT = os.path.abspath(os.path.join(PLUGIN, "..", ".."))
DEMO = os.path.join(ROOT, "..", "shared", "corpus", "openedx-demo-course", "course")
# The demo course's html block whose page carries the version of each publish.
MARKED_BLOCK = "a01fc100e5e64fc5bbca09daa190cfee"
MARK = re.compile(r"burst-version-(\d+)")


def course_id(number):
    return f"course-v1:Burst{number}+DemoX+DemoCourse"


def course_number(course):
    return int(re.match(r"course-v1:Burst(\d+)\+", course).group(1))


def make_courses(root, count):
    """The demo course under count course ids (org BurstN); each course's OLX is what Studio
    holds for it, and publish() edits it."""
    for number in range(count):
        folder = os.path.join(root, "cms", str(number))
        shutil.copytree(DEMO, folder)
        with open(os.path.join(folder, "course.xml"), "w", encoding="utf-8") as file:
            file.write(f'<course url_name="DemoCourse" org="Burst{number}" course="DemoX"/>\n')
    return [course_id(number) for number in range(count)]


def set_version(root, course, version):
    """What an author's edit does in Studio: the marked page now says which version it is."""
    page = os.path.join(root, "cms", str(course_number(course)), "html", f"{MARKED_BLOCK}.html")
    with open(page, encoding="utf-8") as file:
        text = MARK.sub("", file.read())
    with open(page, "w", encoding="utf-8") as file:
        file.write(text + f"\n<p>burst-version-{version}</p>\n")


def export_copy(course, folder):
    """EXPORT_FUNCTION of the workers: the course's OLX as Studio holds it now."""
    source = os.path.join(os.environ["COURSEPACK_BURST_ROOT"], "cms", str(course_number(course)))
    shutil.copytree(source, os.path.join(folder, "course"))
    return os.path.join(folder, "course")


WRAPPER = """#!{python}
# The coursepack binary, logging each build and publish: event, time, worker process, folder, version.
import os, re, subprocess, sys, time
args = sys.argv[1:]
def log(event, folder, version=""):
    with open({log!r}, "a") as file:
        file.write(f"{{event}} {{time.time():.6f}} {{os.getppid()}} {{folder}} {{version}}\\n")
folder = args[args.index("--out") + 1] if args[0] == "build" else args[1]
if args[0] == "build":
    page = os.path.join(args[1], "html", "{block}.html")
    found = re.search(r"burst-version-(\\d+)", open(page).read()) if os.path.exists(page) else None
    log("build-start", folder, found.group(1) if found else "0")
    # Widens the window in which a publish arrives during a build (the pause file can change it).
    time.sleep(float(open({pause_file!r}).read()) if os.path.exists({pause_file!r}) else {pause})
code = subprocess.call([{binary!r}] + args)
log(args[0] + "-end", folder, str(code))
sys.exit(code)
"""


def write_config(root, binary, redis_url, debounce, lock_seconds, pause):
    wrapper = os.path.join(root, "coursepack-logged")
    with open(wrapper, "w", encoding="utf-8") as file:
        file.write(WRAPPER.format(python=sys.executable, log=os.path.join(root, "builds.log"), block=MARKED_BLOCK,
                                  pause=pause, pause_file=os.path.join(root, "pause"), binary=binary))
    os.chmod(wrapper, 0o755)
    shutil.copy(os.path.join(os.path.dirname(binary), "coursepack-sync"), os.path.join(root, "coursepack-sync"))
    config = {
        "database": os.path.join(root, "runs.sqlite3"),
        "broker_url": redis_url,
        "cache_url": redis_url.rsplit("/", 1)[0] + "/1",
        "coursepack": {
            "BINARY": wrapper, "STATE_ROOT": os.path.join(root, "state"), "PUBLISH_TARGET": os.path.join(root, "webroot"),
            "EXPORT_FUNCTION": "tests.burst.export_copy", "DEBOUNCE_SECONDS": debounce, "LOCK_SECONDS": lock_seconds,
            "MAX_RETRIES": 1, "RETRY_BACKOFF_SECONDS": 1,
        },
    }
    path = os.path.join(root, "burst.json")
    with open(path, "w", encoding="utf-8") as file:
        json.dump(config, file)
    return path, config


def worker_environment(root, config_path):
    return {**os.environ, "PYTHONPATH": PLUGIN + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "DJANGO_SETTINGS_MODULE": "tests.worker_settings", "COURSEPACK_BURST_CONFIG": config_path,
            "COURSEPACK_BURST_ROOT": root}


def start_workers(root, config_path, workers):
    """One `celery worker` with `workers` prefork processes; returns once it consumes."""
    log_path = os.path.join(root, "worker.log")
    log = open(log_path, "w", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "tests.worker_app", "worker", "--pool", "prefork", "--concurrency",
         str(workers), "-O", "fair", "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO",
         "--hostname", f"burst-{os.getpid()}@localhost"],
        cwd=PLUGIN, env=worker_environment(root, config_path), stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"celery worker exited {process.returncode}: {open(log_path).read()[-3000:]}")
        if " ready." in open(log_path, encoding="utf-8").read():
            return process
        time.sleep(0.2)
    stop_workers(process)
    raise RuntimeError(f"celery worker not ready in 120 s: {open(log_path).read()[-3000:]}")


def stop_workers(process):
    """A warm shutdown (running builds finish), then a kill if it takes longer than a minute."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def publish(root, course, version, blocks=3):
    """An author publishes: the course's OLX changes, then Studio sends XBLOCK_PUBLISHED for
    several blocks (a real burst of events for one course)."""
    from openedx_events.content_authoring.data import XBlockData
    from openedx_events.content_authoring.signals import XBLOCK_PUBLISHED
    from opaque_keys.edx.keys import UsageKey

    set_version(root, course, version)
    bare = course.split(":", 1)[1]
    for block in [MARKED_BLOCK] + [f"other{n}" for n in range(blocks - 1)]:
        usage_key = UsageKey.from_string(f"block-v1:{bare}+type@html+block@{block}")
        XBLOCK_PUBLISHED.send_event(send_robust=False, xblock_info=XBlockData(usage_key=usage_key, block_type="html"))


def read_log(root):
    """Per course folder: a list of builds, each {start, end, worker, version, build_exit, publish_exit}."""
    builds = {}
    path = os.path.join(root, "builds.log")
    if not os.path.exists(path):
        return builds
    for line in open(path, encoding="utf-8"):
        event, moment, worker, folder, value = (line.split() + [""])[:5]
        runs = builds.setdefault(os.path.basename(os.path.dirname(folder)), [])
        if event == "build-start":
            runs.append({"start": float(moment), "worker": int(worker), "version": int(value)})
            continue
        # A task's build and publish run in one worker process: this is its latest open build
        # (builds of one course that overlap must still be told apart, to be found out).
        run = next(run for run in reversed(runs) if run["worker"] == int(worker))
        if event == "build-end":
            run["build_exit"] = int(value)
        elif event == "publish-end":
            run.update(end=float(moment), publish_exit=int(value))
    return builds


def published_version(root, folder_name):
    """The version that the marked page of the course's published folder shows (None if none)."""
    folder = os.path.join(root, "webroot", folder_name)
    try:
        manifest = json.load(open(os.path.join(folder, "manifest.json"), encoding="utf-8"))
    except OSError:
        return None
    block = next(b for b in manifest["blocks"] if b["usage_id"].endswith("block@" + MARKED_BLOCK))
    with zipfile.ZipFile(os.path.join(folder, block["archive"])) as archive:
        text = "".join(archive.read(name).decode("utf-8", "replace") for name in archive.namelist() if name.endswith(".html"))
    found = MARK.findall(text)
    return int(found[-1]) if found else None


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise TimeoutError(f"{what}: not within {seconds} s")


def finished(root, expected):
    """True once every course has a build of its expected version that ended."""
    from coursepack_openedx.runner import course_folder

    builds = read_log(root)
    for course, version in expected.items():
        runs = builds.get(course_folder(course), [])
        if not any(run["version"] == version and "end" in run for run in runs):
            return False
    return True


def republish_during_builds(root, courses, count, timeout):
    """Publishes version 2 of `count` courses, each while a build of its version 1 is running
    (started, not yet published): that build exported before the publish."""
    from coursepack_openedx.runner import course_folder

    republished = []
    deadline = time.monotonic() + timeout
    while len(republished) < count and time.monotonic() < deadline:
        builds = read_log(root)
        for course in courses:
            runs = builds.get(course_folder(course), [])
            if course not in republished and runs and "end" not in runs[-1] and len(republished) < count:
                publish(root, course, 2, blocks=2)
                republished.append(course)
        time.sleep(0.05)
    return republished


def figures(builds, began):
    """Throughput of a burst from its log: courses per minute from the first build's start to
    the last publish's end, and including the debounce window (from the first event)."""
    runs = [run for course_runs in builds.values() for run in course_runs if "end" in run]
    first, last = min(run["start"] for run in runs), max(run["end"] for run in runs)
    return {
        "courses": len(builds), "builds": len(runs), "workers": len({run["worker"] for run in runs}),
        "seconds": round(last - first, 2), "seconds_from_first_event": round(last - began, 2),
        "courses_per_minute": round(len(builds) * 60 / (last - first), 1),
        "courses_per_minute_from_first_event": round(len(builds) * 60 / (last - began), 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--courses", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "coursepack"))
    parser.add_argument("--debounce", type=float, default=2)
    parser.add_argument("--work", help="folder for the courses, state and web root (default: a temporary one)")
    options = parser.parse_args()
    import tempfile

    from .conftest import start_redis

    root = options.work or tempfile.mkdtemp(prefix="coursepack-burst-")
    redis, redis_url = start_redis()
    workers = None
    try:
        config_path, _ = write_config(root, os.path.abspath(options.binary), redis_url, options.debounce, 600, 0)
        os.environ.update({key: value for key, value in worker_environment(root, config_path).items()
                           if key.startswith(("DJANGO_", "COURSEPACK_"))})
        from . import worker_app  # noqa: F401 (Django set up as the workers are, the app sending to redis)

        courses = make_courses(root, options.courses)
        workers = start_workers(root, config_path, options.workers)
        began = time.time()
        for course in courses:
            publish(root, course, 1)
        wait_for(lambda: finished(root, {course: 1 for course in courses}), 3600, "the burst")
        print(json.dumps({**figures(read_log(root), began), "debounce_seconds": options.debounce}))
    finally:
        if workers is not None:
            stop_workers(workers)
        redis.terminate()
        redis.wait(timeout=10)
        if not options.work:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
