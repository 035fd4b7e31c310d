"""The plugin with real openedx-events signals, a real Celery app (eager) and the real coursepack
binary building the Open edX demo course and publishing it to a folder."""

import hashlib
import json
import logging
import os
import shutil
import subprocess

import pytest
from django.core.cache import cache
from django.core.management import call_command
from openedx_events.content_authoring.data import CourseData, XBlockData
from openedx_events.content_authoring.signals import COURSE_IMPORT_COMPLETED, XBLOCK_PUBLISHED
from opaque_keys.edx.keys import CourseKey, UsageKey

from coursepack_openedx.models import CoursepackRun, PublishedBlock
from coursepack_openedx.runner import course_folder

from .conftest import ROOT

DEMO = os.path.join(ROOT, "..", "shared", "corpus", "openedx-demo-course", "course")
COURSE_ID = "course-v1:OpenedX+DemoX+DemoCourse"

exports = []


def export_demo(course_id, folder):
    """Stands in for the platform's export: writes the demo course's OLX into folder."""
    exports.append(course_id)
    shutil.copytree(DEMO, os.path.join(folder, "course"))
    return os.path.join(folder, "course")


def failing_export(course_id, folder):
    exports.append(course_id)
    raise RuntimeError("modulestore unavailable")


def coursepack_binary():
    binary = os.environ.get("COURSEPACK") or os.path.join(ROOT, ".build", "debug", "coursepack")
    if not os.path.exists(binary):
        pytest.fail(f"{binary} is missing: run `swift build` first (make test does)")
    return binary


@pytest.fixture
def configured(settings, tmp_path):
    exports.clear()
    cache.clear()
    settings.COURSEPACK = {
        "BINARY": coursepack_binary(),
        "STATE_ROOT": str(tmp_path / "state"),
        "PUBLISH_TARGET": str(tmp_path / "webroot"),
        "EXPORT_FUNCTION": "tests.test_plugin.export_demo",
        "COURSE_LISTER": "tests.test_plugin.list_courses",
        "DEBOUNCE_SECONDS": 30,
        "RETRY_BACKOFF_SECONDS": 1,
        "MAX_RETRIES": 2,
    }
    return tmp_path


def published_folder(course_id):
    """The course's folder in the target, as docs/publishing.md documents it (and `publish` makes it):
    every UTF-8 byte outside A-Z a-z 0-9 - . (and a leading .) as _XX, then - and 8 hex digits of
    the id's SHA-256 (the whole SHA-256 after the first 100 characters of a longer escaped id)."""
    def keep(index, byte):
        char = chr(byte)
        return char.isascii() and (char.isalnum() or char == "-" or (char == "." and index > 0))
    escaped = "".join(chr(b) if keep(i, b) else f"_{b:02X}" for i, b in enumerate(course_id.encode()))
    digest = hashlib.sha256(course_id.encode()).hexdigest()
    return escaped[:100] + "-" + digest if len(escaped) > 150 else escaped + "-" + digest[:8]


def list_courses():
    return [CourseKey.from_string(COURSE_ID)]


def publish_event(block):
    usage_key = UsageKey.from_string(f"block-v1:OpenedX+DemoX+DemoCourse+type@html+block@{block}")
    return XBLOCK_PUBLISHED.send_event(send_robust=False, xblock_info=XBlockData(usage_key=usage_key, block_type="html"))


@pytest.mark.django_db
def test_a_burst_of_publish_events_becomes_one_build_and_one_publish(configured, caplog):
    caplog.set_level(logging.INFO, logger="coursepack")
    for number in range(20):
        publish_event(f"block{number}")
    assert exports == [COURSE_ID]
    runs = list(CoursepackRun.objects.all())
    assert len(runs) == 1
    run = runs[0]
    assert (run.course_id, run.trigger, run.status, run.build_exit, run.publish_exit) == (COURSE_ID, "publish", "succeeded", 0, 0)
    assert run.counts["build"]["built"] > 250
    # The course is published into its own folder of the target, recorded on the run and in the
    # target's courses.json.
    webroot = configured / "webroot"
    folder = webroot / published_folder(COURSE_ID)
    assert run.manifest == str(folder / "manifest.json")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["course_id"] == COURSE_ID
    assert all((folder / block["archive"]).is_file() for block in manifest["blocks"] if "archive" in block)
    # 293 block archives, the runtime, the search index, each course file content once, and
    # the parts of the split manifest.
    parts = json.loads((folder / "manifest-index.json").read_text())["parts"]
    assert all((folder / "manifest" / (part["sha256"] + ".json")).is_file() for part in parts)
    assert run.counts["publish"]["uploaded"] == 295 + len(manifest["files"]) + len(parts)
    index = json.loads((webroot / "courses.json").read_text())
    assert index["courses"][COURSE_ID]["manifest"] == published_folder(COURSE_ID) + "/manifest.json"
    queued = [r.getMessage() for r in caplog.records if "build queued" in r.getMessage()]
    assert queued == [f"coursepack: {COURSE_ID}: publish event, build queued in 30 s"]
    assert any(r.getMessage().startswith(f"coursepack: {COURSE_ID}: built (exit 0)") for r in caplog.records)
    assert any(r.getMessage().startswith(f"coursepack: {COURSE_ID}: published to ") for r in caplog.records)
    # The build state and output live under the course's own state folder.
    assert (configured / "state" / course_folder(COURSE_ID) / "published" / "manifest.json").is_file()
    # The LMS side answers devices from the versions of what was just published.
    versions = dict(PublishedBlock.objects.filter(course_id=COURSE_ID).values_list("usage_id", "content_hash"))
    assert versions == {block["usage_id"]: block["content_hash"] for block in manifest["blocks"] if "content_hash" in block}
    assert len(versions) > 250


@pytest.mark.django_db
def test_events_after_the_window_queue_the_next_build(configured):
    publish_event("first")
    cache.delete(f"coursepack:pending:{COURSE_ID}")  # the debounce window has passed
    publish_event("second")
    assert exports == [COURSE_ID, COURSE_ID]
    # The second build found nothing changed: every archive reused.
    latest = CoursepackRun.objects.first()
    assert latest.counts["build"]["built"] == 0 and latest.counts["build"]["reused"] > 250


@pytest.mark.django_db
def test_course_import_completed_triggers_a_build(configured):
    COURSE_IMPORT_COMPLETED.send_event(send_robust=False, course=CourseData(course_key=CourseKey.from_string(COURSE_ID)))
    assert CoursepackRun.objects.get().trigger == "import"


@pytest.mark.django_db
def test_a_failing_export_is_retried_then_given_up_with_a_logged_error(configured, settings, caplog):
    settings.COURSEPACK = {**settings.COURSEPACK, "EXPORT_FUNCTION": "tests.test_plugin.failing_export"}
    caplog.set_level(logging.INFO, logger="coursepack")
    publish_event("x")
    assert exports == [COURSE_ID] * 3  # the first attempt and two retries
    # One record per attempt: every failure stays visible.
    runs = list(CoursepackRun.objects.order_by("attempts"))
    assert [(run.status, run.attempts) for run in runs] == [("failed", 1), ("failed", 2), ("failed", 3)]
    assert all("modulestore unavailable" in run.message for run in runs)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in errors] == [
        f"coursepack: {COURSE_ID}: giving up after 3 attempts: export of {COURSE_ID} failed: modulestore unavailable"]
    assert not (configured / "webroot").exists()


@pytest.mark.django_db
def test_a_build_with_a_failed_block_still_publishes_what_succeeded(configured, settings, tmp_path, caplog):
    broken = tmp_path / "broken"
    shutil.copytree(DEMO, broken)
    # One html block's content file goes missing: that block fails, the others are built.
    (broken / "html" / "a01fc100e5e64fc5bbca09daa190cfee.html").unlink()
    global DEMO_OVERRIDE
    DEMO_OVERRIDE = str(broken)
    settings.COURSEPACK = {**settings.COURSEPACK, "EXPORT_FUNCTION": "tests.test_plugin.export_override"}
    caplog.set_level(logging.INFO, logger="coursepack")
    publish_event("y")
    run = CoursepackRun.objects.get()
    assert (run.status, run.build_exit, run.publish_exit) == ("partial", 1, 0)
    assert run.failed_blocks == [f"block-v1:OpenedX+DemoX+DemoCourse+type@html+block@a01fc100e5e64fc5bbca09daa190cfee"]
    assert (configured / "webroot" / published_folder(COURSE_ID) / "manifest.json").is_file()
    assert any("failed" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


DEMO_OVERRIDE = None


def export_override(course_id, folder):
    shutil.copytree(DEMO_OVERRIDE, os.path.join(folder, "course"))
    return os.path.join(folder, "course")


@pytest.mark.django_db
def test_management_commands_rebuild_one_course_and_all(configured):
    call_command("coursepack_build", COURSE_ID)
    call_command("coursepack_build_all")
    assert [run.trigger for run in CoursepackRun.objects.all()] == ["manual", "manual"]
    assert exports == [COURSE_ID, COURSE_ID]


@pytest.fixture
def moto(tmp_path, monkeypatch):
    """A real S3 protocol server on loopback (moto_server), with one bucket."""
    import socket
    import subprocess
    import time

    import boto3

    binary = shutil.which("moto_server")
    if not binary:
        pytest.fail("moto_server is needed (pip install 'moto[server]'; make test installs it)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([binary, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}.items():
        monkeypatch.setenv(key, value)
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    for _ in range(100):
        try:
            s3.create_bucket(Bucket="offline")
            break
        except Exception:
            time.sleep(0.1)
    yield endpoint, s3
    server.kill()  # moto_server ignores SIGTERM
    server.wait(timeout=10)


@pytest.mark.django_db
def test_a_burst_publishes_to_s3_compatible_storage(configured, settings, moto):
    endpoint, s3 = moto
    # Eager tasks run inside publish_event: a window longer than any build here keeps the burst one
    # build even when a loaded machine takes minutes over it.
    settings.COURSEPACK = {**settings.COURSEPACK, "PUBLISH_TARGET": "s3://offline/courses/demo", "ENDPOINT_URL": endpoint,
                           "DEBOUNCE_SECONDS": 3600}
    for number in range(5):
        publish_event(f"s3-{number}")
    run = CoursepackRun.objects.get()
    assert (run.status, run.build_exit, run.publish_exit) == ("succeeded", 0, 0)
    keys = {item["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket="offline") for item in page.get("Contents", [])}
    prefix = f"courses/demo/{published_folder(COURSE_ID)}/"
    assert run.manifest == f"s3://offline/{prefix}manifest.json"
    manifest = json.loads(s3.get_object(Bucket="offline", Key=prefix + "manifest.json")["Body"].read())
    named = {prefix + block["archive"] for block in manifest["blocks"] if "archive" in block}
    assert named and named <= keys
    assert prefix + manifest["runtime"]["archive"] in keys
    assert "courses/demo/courses.json" in keys
    # Without PUBLIC_URL, file_url is relative to the manifest.
    assert all(block["offline_download"]["file_url"] == block["archive"] for block in manifest["blocks"] if "archive" in block)


# Course ids that the folder rule must escape the way `coursepack publish` does: letters and
# digits beyond ASCII, `~ . _`, case, and escaped lengths of exactly 150 (kept whole) and 151
# (cut to 100 characters and the whole SHA-256).
TRICKY_COURSES = [
    ("OpenedX", "DemoX", "DemoCourse"),
    ("Ünïcødé_٣²", "a.b~c", "2026_T1~x.y"),
    ("openedx", "demox", "democourse"),
    ("O" * 100, "N" * 16, "R" * 16),
    ("O" * 100, "N" * 16, "R" * 17),
    ("É" * 30, "N", "R"),
]


def tiny_course(folder, org, number, run):
    """A course of one page, with the given identity."""
    for sub in ("course", "chapter", "sequential", "vertical", "html"):
        (folder / sub).mkdir(parents=True)
    (folder / "course.xml").write_text(f'<course url_name="{run}" org="{org}" course="{number}"/>\n')
    (folder / "course" / f"{run}.xml").write_text('<course display_name="Tiny"><chapter url_name="c"/></course>\n')
    (folder / "chapter" / "c.xml").write_text('<chapter display_name="C"><sequential url_name="s"/></chapter>\n')
    (folder / "sequential" / "s.xml").write_text('<sequential display_name="S"><vertical url_name="v"/></sequential>\n')
    (folder / "vertical" / "v.xml").write_text('<vertical display_name="V"><html url_name="h"/></vertical>\n')
    (folder / "html" / "h.xml").write_text('<html filename="h" display_name="H"/>\n')
    (folder / "html" / "h.html").write_text("<p>Hello</p>\n")


@pytest.mark.parametrize("org,number,run", TRICKY_COURSES)
def test_the_plugins_target_folder_is_the_one_coursepack_publish_uses(tmp_path, org, number, run):
    from coursepack_openedx.runner import target_folder

    tiny_course(tmp_path / "course", org, number, run)
    binary = coursepack_binary()
    built = subprocess.run([binary, "build", str(tmp_path / "course"), "--out", str(tmp_path / "out"), "--quiet"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    published = subprocess.run([binary, "publish", str(tmp_path / "out"), "--to", str(tmp_path / "web"),
                                "--report", str(tmp_path / "report.json")], capture_output=True, text=True)
    assert published.returncode == 0, published.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["course_id"] == f"course-v1:{org}+{number}+{run}"
    assert target_folder(report["course_id"]) == report["course_prefix"]
    assert (tmp_path / "web" / report["course_prefix"] / "manifest.json").is_file()


TRICKY_ID = "course-v1:Ünïcødé.x~y_z+DemoX+DemoCourse"


def export_tricky(course_id, folder):
    """The demo course as the platform exports it under TRICKY_ID."""
    assert course_id == TRICKY_ID
    course = os.path.join(folder, "course")
    shutil.copytree(DEMO, course)
    with open(os.path.join(course, "course.xml"), "w", encoding="utf-8") as file:
        file.write('<course url_name="DemoCourse" org="Ünïcødé.x~y_z" course="DemoX"/>\n')
    return course


@pytest.mark.django_db
def test_public_url_gives_absolute_file_urls_that_resolve_in_the_published_course_folder(configured, settings, nginx):
    """PUBLIC_URL is where PUBLISH_TARGET is served: here a web root, served by a real nginx, so
    every file_url is fetched back from where the publish put it."""
    import urllib.request

    from coursepack_openedx.signals import schedule

    webroot, base = nginx
    public = f"{base}/courses/"
    settings.COURSEPACK = {**settings.COURSEPACK, "PUBLISH_TARGET": str(webroot / "courses"), "PUBLIC_URL": public,
                           "EXPORT_FUNCTION": "tests.test_plugin.export_tricky", "DEBOUNCE_SECONDS": 3600}
    schedule(TRICKY_ID, "publish")
    run = CoursepackRun.objects.get()
    assert (run.course_id, run.status, run.build_exit, run.publish_exit) == (TRICKY_ID, "succeeded", 0, 0)
    folder = webroot / "courses" / published_folder(TRICKY_ID)
    assert run.manifest == str(folder / "manifest.json")
    manifest = json.loads((folder / "manifest.json").read_text())
    downloads = [block for block in manifest["blocks"] if "archive" in block]
    assert len(downloads) > 250
    for block in downloads:
        url = block["offline_download"]["file_url"]
        assert url == public + published_folder(TRICKY_ID) + "/" + block["archive"]
        with urllib.request.urlopen(url, timeout=30) as response:
            body = response.read()
        assert body == (folder / block["archive"]).read_bytes(), url
        assert len(body) == block["offline_download"]["file_size"], url


def test_the_plugin_is_registered_for_studio():
    from importlib.metadata import entry_points

    from coursepack_openedx.apps import CoursepackConfig

    receivers = CoursepackConfig.plugin_app["signals_config"]["cms.djangoapp"]["receivers"]
    assert {r["signal_path"] for r in receivers} == {
        "openedx_events.content_authoring.signals.XBLOCK_PUBLISHED",
        "openedx_events.content_authoring.signals.COURSE_IMPORT_COMPLETED",
    }
    names = [e.value for e in entry_points(group="cms.djangoapp") if e.name == "coursepack"]
    assert names == ["coursepack_openedx.apps:CoursepackConfig"], "pip install -e integrations/openedx registers it"


def hanging_binary(tmp_path, before_hang=""):
    """A BINARY that hangs (with a child, as a wrapper script would have) and writes the ids of
    both to a file, so the test can check that a timeout left neither running."""
    pids = tmp_path / "pids"
    script = tmp_path / "hanging-coursepack"
    script.write_text(f"""#!/bin/sh
echo $$ >> {pids}
{before_hang}
sleep 300 &
echo $! >> {pids}
wait
""")
    script.chmod(0o755)
    return str(script), pids


def running(pid):
    """True while the process exists and is not a zombie waiting for its parent."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def wait_until(condition, seconds, what):
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    pytest.fail(f"{what}: not within {seconds} s")


@pytest.mark.django_db
def test_a_build_past_its_timeout_is_killed_recorded_and_retried(configured, settings, tmp_path, caplog):
    import time

    binary, pids = hanging_binary(tmp_path)
    settings.COURSEPACK = {**settings.COURSEPACK, "BINARY": binary, "BUILD_TIMEOUT_SECONDS": 1}
    caplog.set_level(logging.INFO, logger="coursepack")
    began = time.monotonic()
    publish_event("timeout")
    # Three attempts of about a second each: the hanging child did not keep any of them waiting.
    assert time.monotonic() - began < 30
    runs = list(CoursepackRun.objects.order_by("attempts"))
    assert [(run.status, run.attempts) for run in runs] == [("timeout", 1), ("timeout", 2), ("timeout", 3)]
    assert all(run.message == "coursepack build timed out after 1 s and was killed" for run in runs)
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) == 6  # the script and its child, per attempt
    wait_until(lambda: not any(running(pid) for pid in started), 10, "processes of the timed-out builds still running")
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [
        f"coursepack: {COURSE_ID}: giving up after 3 attempts: coursepack build timed out after 1 s and was killed"]
    assert not (configured / "webroot").exists()


@pytest.mark.django_db
def test_a_publish_that_times_out_or_fails_is_recorded_and_retried(configured, settings, tmp_path):
    # A publish that hangs: the build runs for real, the publish step hangs past its timeout.
    real = coursepack_binary()
    wrapper = tmp_path / "publish-hangs"
    wrapper.write_text(f"""#!/bin/sh
if [ "$1" = publish ]; then sleep 300; fi
exec {real} "$@"
""")
    wrapper.chmod(0o755)
    settings.COURSEPACK = {**settings.COURSEPACK, "BINARY": str(wrapper), "PUBLISH_TIMEOUT_SECONDS": 1, "MAX_RETRIES": 1}
    publish_event("publish-timeout")
    runs = list(CoursepackRun.objects.order_by("attempts"))
    assert [(run.status, run.attempts, run.message) for run in runs] == [
        ("timeout", n, "coursepack publish timed out after 1 s and was killed") for n in (1, 2)]

    # A publish that fails (its target is a file): exit 2, recorded and retried as well.
    CoursepackRun.objects.all().delete()
    cache.clear()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    settings.COURSEPACK = {**settings.COURSEPACK, "BINARY": real, "PUBLISH_TARGET": str(blocker / "webroot")}
    publish_event("publish-fails")
    runs = list(CoursepackRun.objects.order_by("attempts"))
    assert [(run.status, run.attempts) for run in runs] == [("failed", 1), ("failed", 2)]
    assert all(run.message.startswith("coursepack publish exited ") for run in runs)
    # Devices cannot get what was not published: its versions are not recorded.
    assert not PublishedBlock.objects.exists()


@pytest.mark.django_db
def test_a_build_killed_mid_way_leaves_no_lock_and_the_retry_publishes(configured, settings, tmp_path, monkeypatch):
    """The first attempt starts the real build, freezes it mid-way (holding the build folder's
    lock) and hangs; the timeout kills the whole group. The retry's real build must get the
    lock and publish a complete course."""
    real = coursepack_binary()
    marker = tmp_path / "first-attempt-done"
    pids = tmp_path / "pids"
    wrapper = tmp_path / "freezes-once"
    wrapper.write_text(f"""#!/bin/sh
if [ "$1" = build ] && [ ! -e {marker} ]; then
  touch {marker}
  {real} "$@" &
  echo $! >> {pids}
  sleep 0.3
  kill -STOP $!
  sleep 300
fi
exec {real} "$@"
""")
    wrapper.chmod(0o755)
    settings.COURSEPACK = {**settings.COURSEPACK, "BINARY": str(wrapper), "BUILD_TIMEOUT_SECONDS": 120}
    # Only the first attempt, the one that hangs, gets a short timeout; the retry has time to build.
    from coursepack_openedx import runner

    original_run = runner.run
    short = iter([3])

    def first_build_short(arguments, timeout):
        return original_run(arguments, next(short, timeout) if arguments[1] == "build" else timeout)

    monkeypatch.setattr(runner, "run", first_build_short)
    publish_event("killed")
    runs = list(CoursepackRun.objects.order_by("attempts"))
    assert [(run.status, run.attempts) for run in runs] == [("timeout", 1), ("succeeded", 2)], [r.message for r in runs]
    frozen = int(pids.read_text().split()[0])
    wait_until(lambda: not running(frozen), 10, "the frozen build is still there")
    folder = configured / "webroot" / published_folder(COURSE_ID)
    verify = subprocess.run([coursepack_binary(), "verify", str(folder)], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr


@pytest.mark.django_db
def test_the_admin_lists_every_attempt_with_status_and_message(configured, settings, tmp_path, client):
    from django.contrib.auth.models import User

    binary, _ = hanging_binary(tmp_path)
    settings.COURSEPACK = {**settings.COURSEPACK, "BINARY": binary, "BUILD_TIMEOUT_SECONDS": 1, "MAX_RETRIES": 1}
    publish_event("admin")
    client.force_login(User.objects.create_superuser("admin", "admin@example.org", "x"))
    page = client.get("/admin/coursepack_openedx/coursepackrun/").content.decode()
    assert page.count("coursepack build timed out after 1 s and was killed") == 2
    assert page.count('class="field-status">timeout<') == 2
    assert page.count('class="field-attempts">1<') == 1 and page.count('class="field-attempts">2<') == 1


@pytest.mark.django_db(transaction=True)
def test_retries_go_through_a_real_worker_and_broker(configured, settings, tmp_path, real_broker):
    """Not eager: the task goes to redis, a real worker takes it, and each `self.retry` goes
    back through redis with its countdown before the worker runs the next attempt."""
    from celery.contrib.testing.worker import start_worker
    from celery.signals import task_received, task_retry

    from coursepack_openedx.tasks import build_course

    app, _ = real_broker
    binary, pids = hanging_binary(tmp_path)
    settings.COURSEPACK = {**settings.COURSEPACK, "BINARY": binary, "BUILD_TIMEOUT_SECONDS": 1,
                           "MAX_RETRIES": 2, "RETRY_BACKOFF_SECONDS": 0.5}
    received, retried = [], []

    def on_received(request=None, **kwargs):
        received.append(request.id)

    def on_retry(request=None, **kwargs):
        retried.append(request.retries)

    task_received.connect(on_received, weak=False)
    task_retry.connect(on_retry, weak=False)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30, loglevel="WARNING"):
            build_course.delay(COURSE_ID, "publish")
            wait_until(lambda: CoursepackRun.objects.count() == 3, 60, "three recorded attempts")
            wait_until(lambda: len(received) == 3, 10, "three deliveries")
    finally:
        task_received.disconnect(on_received)
        task_retry.disconnect(on_retry)
    runs = list(CoursepackRun.objects.order_by("attempts"))
    assert [(run.status, run.attempts) for run in runs] == [("timeout", 1), ("timeout", 2), ("timeout", 3)]
    # The first message and two retries, each delivered by the broker to the worker.
    assert len(received) == 3 and len(set(received)) == 1
    assert retried == [0, 1]
    # Backoff: 0.5 s, then 1 s between the end of one attempt and the start of the next.
    gaps = [(later.started_at - earlier.finished_at).total_seconds() for earlier, later in zip(runs, runs[1:])]
    assert gaps[0] >= 0.4 and gaps[1] >= 0.9, gaps
    started = [int(line) for line in pids.read_text().split()]
    wait_until(lambda: not any(running(pid) for pid in started), 10, "processes of the timed-out builds still running")


@pytest.mark.django_db
def test_eager_tasks_still_run_after_a_test_sent_tasks_to_a_real_broker(configured, redis_broker):
    """The class of failure behind kombu's "Acquire on closed pool" in CI: a test that switches
    the Celery app to a real broker and back must not leave a closed pool registered for the
    next test's broker URL (even eager tasks acquire a producer from it)."""
    from coursepack_openedx.tasks import build_course

    from .conftest import sending_to

    publish_event("before")  # an eager task: the default broker URL's pools now exist
    with sending_to(redis_broker):
        build_course.apply_async(args=[COURSE_ID, "manual"], countdown=3600)  # into redis, not run
    cache.clear()
    publish_event("after")
    assert exports == [COURSE_ID, COURSE_ID]
    assert [run.status for run in CoursepackRun.objects.all()] == ["succeeded", "succeeded"]


@pytest.mark.django_db
def test_a_course_being_built_elsewhere_gets_one_rebuild_request_and_the_rerun_builds_once(configured):
    """The lock's protocol within one process (Celery eager; the burst test runs it across
    worker processes): a task that finds the course's lock taken builds nothing and asks for a
    rebuild; the rerun builds once and clears the request, a second rerun finds nothing to do."""
    from coursepack_openedx.course_lock import lock_key, rerun_requested
    from coursepack_openedx.tasks import build_course

    cache.add(lock_key(COURSE_ID), {"token": "another-worker", "expires": 0}, timeout=600)
    assert build_course.apply(args=[COURSE_ID, "publish"]).get()["status"] == "deferred"
    assert exports == [] and not CoursepackRun.objects.exists() and rerun_requested(COURSE_ID)
    cache.delete(lock_key(COURSE_ID))  # the other worker is done
    assert build_course.apply(args=[COURSE_ID, "rerun"]).get()["status"] == "succeeded"
    assert build_course.apply(args=[COURSE_ID, "rerun"]).get()["status"] == "skipped"
    assert exports == [COURSE_ID] and not rerun_requested(COURSE_ID)
    assert [run.trigger for run in CoursepackRun.objects.all()] == ["rerun"]
    assert cache.get(lock_key(COURSE_ID)) is None  # let go after the build
