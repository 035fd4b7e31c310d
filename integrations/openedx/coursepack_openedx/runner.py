"""Runs coursepack for one course: export → `coursepack build` → `coursepack publish`."""

import hashlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field

from django.utils.module_loading import import_string

from .conf import setting

log = logging.getLogger("coursepack")


class BuildFailed(Exception):
    """An attempt that did not end with the course published: recorded, then retried."""

    status = "failed"


class CannotBuild(BuildFailed):
    """Nothing was built or published (export failed, bad input: exit 2); worth retrying."""


class PublishFailed(BuildFailed):
    """`coursepack publish` did not finish: clients still get the previous publish, complete."""


class TimedOut(BuildFailed):
    """A coursepack run passed its timeout and was killed, with every process it started."""

    status = "timeout"


@dataclass
class Outcome:
    build_exit: int
    publish_exit: int | None = None
    counts: dict = field(default_factory=dict)
    failed_blocks: list = field(default_factory=list)
    publish_counts: dict = field(default_factory=dict)
    message: str = ""
    # Where the course's manifest went (the course's own folder of PUBLISH_TARGET).
    manifest: str = ""
    # The built manifest on this machine: what clients get once it is published.
    local_manifest: str = ""

    @property
    def status(self):
        if self.build_exit == 0 and self.publish_exit in (0, None):
            return "succeeded"
        if self.build_exit in (0, 1) and self.publish_exit in (0, 1, None):
            return "partial"
        return "failed"


def course_folder(course_id):
    """A folder name per course: readable, and distinct even where cleaning merges two ids."""
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", course_id)[:80]
    return f"{readable}-{hashlib.sha256(course_id.encode()).hexdigest()[:8]}"


def target_folder(course_id):
    """The course's folder of the publish target, named as `coursepack publish` names it
    (docs/publishing.md): each UTF-8 byte outside A-Z a-z 0-9 - and a non-leading . as _XX, then -
    and 8 hex digits of the id's SHA-256 (the whole digest after the first 100 characters of an
    escaped id longer than 150)."""
    def kept(index, byte):
        char = chr(byte)
        return char.isascii() and (char.isalnum() or char == "-" or (char == "." and index > 0))
    escaped = "".join(chr(b) if kept(i, b) else f"_{b:02X}" for i, b in enumerate(course_id.encode()))
    digest = hashlib.sha256(course_id.encode()).hexdigest()
    return escaped[:100] + "-" + digest if len(escaped) > 150 else escaped + "-" + digest[:8]


def run(arguments, timeout):
    """Runs coursepack in its own process group, so that a timeout kills it and everything it
    started: subprocess.run would kill only the first process, and then wait for the pipes that
    its children still hold open. coursepack is crash-safe and its lock (flock) goes with it."""
    log.debug("coursepack: running %s", " ".join(arguments))
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        raise TimedOut(f"coursepack {arguments[1]} timed out after {timeout} s and was killed") from None
    except BaseException:
        kill_group(process)
        raise
    return subprocess.CompletedProcess(arguments, process.returncode, stdout, stderr)


def kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate()


def read_json(path):
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return {}


def publish_counts(report):
    """The counts of a `coursepack publish --report`: objects uploaded, unchanged, deleted."""
    if not report:
        return {}
    def count(value):
        return len(value) if isinstance(value, list) else value
    return {
        "uploaded": count(report.get("uploads", [])),
        "bytes_uploaded": report.get("bytes_uploaded", 0),
        "unchanged": count(report.get("unchanged", 0)),
        "deleted": count(report.get("deleted", [])),
        "kept_for_grace_period": count(report.get("scheduled_deletions", [])),
    }


def build_and_publish(course_id, on_step=lambda: None):
    """on_step runs between the steps (the task renews the course's lock there)."""
    root = os.path.join(setting("STATE_ROOT"), course_folder(course_id))
    published = os.path.join(root, "published")
    os.makedirs(root, exist_ok=True)
    export_root = tempfile.mkdtemp(prefix="export-", dir=root)
    try:
        course_path = export_course(course_id, export_root)
        on_step()
        outcome = build(course_id, course_path, published, os.path.join(root, "build-report.json"))
        target = setting("PUBLISH_TARGET")
        if target:
            on_step()
            # A build with failed blocks still publishes: their previous archives were kept.
            publish(course_id, outcome, published, target, os.path.join(root, "publish-report.json"))
        return outcome
    finally:
        shutil.rmtree(export_root, ignore_errors=True)


def export_course(course_id, export_root):
    try:
        return import_string(setting("EXPORT_FUNCTION"))(course_id, export_root) or export_root
    except Exception as error:  # the platform's export raises anything
        raise CannotBuild(f"export of {course_id} failed: {error}") from error


def build(course_id, course_path, published, report_path):
    arguments = [setting("BINARY"), "build", course_path, "--out", published, "--report", report_path, "--quiet"]
    if setting("LMS_URL"):
        arguments += ["--lms-url", setting("LMS_URL")]
    if setting("PUBLIC_URL"):
        # The course's own folder of the target, where publish puts its manifest.
        arguments += ["--public-url", setting("PUBLIC_URL").rstrip("/") + "/" + target_folder(course_id) + "/"]
    built = run(arguments, setting("BUILD_TIMEOUT_SECONDS"))
    if built.returncode not in (0, 1):
        raise CannotBuild(f"coursepack build exited {built.returncode}: {built.stderr.strip()[-2000:]}")
    report = read_json(report_path)
    outcome = Outcome(
        build_exit=built.returncode,
        counts=report.get("counts", {}),
        failed_blocks=[error.get("block") for error in report.get("errors", [])],
        local_manifest=os.path.join(published, "manifest.json"),
    )
    log.info("coursepack: %s: built (exit %s): %s", course_id, built.returncode,
             ", ".join(f"{value} {name}" for name, value in sorted(outcome.counts.items())))
    for error in report.get("errors", []):
        log.warning("coursepack: %s: block %s failed: %s", course_id, error.get("block"), error.get("message"))
    return outcome


def publish(course_id, outcome, published, target, report_path):
    """Publishes the build into target, filling in outcome's publish fields."""
    arguments = [setting("BINARY"), "publish", published, "--to", target, "--report", report_path]
    if setting("ENDPOINT_URL"):
        arguments += ["--endpoint-url", setting("ENDPOINT_URL")]
        if setting("PATH_STYLE"):
            arguments += ["--path-style"]
    if setting("AWS_PROFILE"):
        arguments += ["--profile", setting("AWS_PROFILE")]
    if os.path.exists(report_path):
        os.unlink(report_path)  # a report left by an earlier run must not pass for this one's
    publishing = run(arguments, setting("PUBLISH_TIMEOUT_SECONDS"))
    outcome.publish_exit = publishing.returncode
    report = read_json(report_path)
    outcome.publish_counts = publish_counts(report)
    outcome.manifest = report.get("manifest", "")
    if publishing.returncode != 0:
        raise PublishFailed(f"coursepack publish exited {publishing.returncode}: {publishing.stderr.strip()[-2000:]}")
    # Each course goes into its own folder of the target; its manifest is there.
    log.info("coursepack: %s: published to %s (exit %s): %s", course_id, outcome.manifest or target, publishing.returncode,
             ", ".join(f"{value} {name}" for name, value in sorted(outcome.publish_counts.items())))
