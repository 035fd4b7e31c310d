"""The plugin with real openedx-events signals, a real Celery app (eager) and the real coursepack
binary building the Open edX demo course and publishing it to a folder."""

import json
import logging
import os
import shutil

import pytest
from django.core.cache import cache
from django.core.management import call_command
from openedx_events.content_authoring.data import CourseData, XBlockData
from openedx_events.content_authoring.signals import COURSE_IMPORT_COMPLETED, XBLOCK_PUBLISHED
from opaque_keys.edx.keys import CourseKey, UsageKey

from coursepack_openedx.models import CoursepackRun
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
    assert run.counts["publish"]["uploaded"] == 295  # 293 block archives, the runtime and the search index
    webroot = configured / "webroot"
    manifest = json.loads((webroot / "manifest.json").read_text())
    assert manifest["course_id"] == COURSE_ID
    assert all((webroot / block["archive"]).is_file() for block in manifest["blocks"] if "archive" in block)
    queued = [r.getMessage() for r in caplog.records if "build queued" in r.getMessage()]
    assert queued == [f"coursepack: {COURSE_ID}: publish event, build queued in 30 s"]
    assert any(r.getMessage().startswith(f"coursepack: {COURSE_ID}: built (exit 0)") for r in caplog.records)
    assert any(r.getMessage().startswith(f"coursepack: {COURSE_ID}: published to ") for r in caplog.records)
    # The build state and output live under the course's own state folder.
    assert (configured / "state" / course_folder(COURSE_ID) / "published" / "manifest.json").is_file()


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
    run = CoursepackRun.objects.get()
    assert run.status == "failed" and run.attempts == 3 and "modulestore unavailable" in run.message
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in errors] == [
        f"coursepack: {COURSE_ID}: giving up after 3 attempts: export of {COURSE_ID} failed: modulestore unavailable"]
    assert not (configured / "webroot" / "manifest.json").exists()


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
    assert (configured / "webroot" / "manifest.json").is_file()
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
    settings.COURSEPACK = {**settings.COURSEPACK, "PUBLISH_TARGET": "s3://offline/courses/demo", "ENDPOINT_URL": endpoint}
    for number in range(5):
        publish_event(f"s3-{number}")
    run = CoursepackRun.objects.get()
    assert (run.status, run.build_exit, run.publish_exit) == ("succeeded", 0, 0)
    keys = {item["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket="offline") for item in page.get("Contents", [])}
    manifest = json.loads(s3.get_object(Bucket="offline", Key="courses/demo/manifest.json")["Body"].read())
    named = {"courses/demo/" + block["archive"] for block in manifest["blocks"] if "archive" in block}
    assert named and named <= keys
    assert "courses/demo/" + manifest["runtime"]["archive"] in keys


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
