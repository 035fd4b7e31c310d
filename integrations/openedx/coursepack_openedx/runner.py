"""Runs coursepack for one course: export → `coursepack build` → `coursepack publish`."""

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from django.utils.module_loading import import_string

from .conf import setting

log = logging.getLogger("coursepack")


class CannotBuild(Exception):
    """Nothing was built or published (export failed, bad input: exit 2); worth retrying."""


@dataclass
class Outcome:
    build_exit: int
    publish_exit: int | None = None
    counts: dict = field(default_factory=dict)
    failed_blocks: list = field(default_factory=list)
    publish_counts: dict = field(default_factory=dict)
    message: str = ""

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


def run(arguments, timeout):
    log.debug("coursepack: running %s", " ".join(arguments))
    return subprocess.run(arguments, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


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


def build_and_publish(course_id):
    binary = setting("BINARY")
    root = os.path.join(setting("STATE_ROOT"), course_folder(course_id))
    published = os.path.join(root, "published")
    os.makedirs(root, exist_ok=True)
    export_root = tempfile.mkdtemp(prefix="export-", dir=root)
    try:
        try:
            course_path = import_string(setting("EXPORT_FUNCTION"))(course_id, export_root) or export_root
        except Exception as error:  # the platform's export raises anything
            raise CannotBuild(f"export of {course_id} failed: {error}") from error

        report_path = os.path.join(root, "build-report.json")
        arguments = [binary, "build", course_path, "--out", published, "--report", report_path, "--quiet"]
        if setting("LMS_URL"):
            arguments += ["--lms-url", setting("LMS_URL")]
        built = run(arguments, setting("BUILD_TIMEOUT_SECONDS"))
        if built.returncode not in (0, 1):
            raise CannotBuild(f"coursepack build exited {built.returncode}: {built.stderr.strip()[-2000:]}")
        report = read_json(report_path)
        outcome = Outcome(
            build_exit=built.returncode,
            counts=report.get("counts", {}),
            failed_blocks=[error.get("block") for error in report.get("errors", [])],
        )
        log.info("coursepack: %s: built (exit %s): %s", course_id, built.returncode,
                 ", ".join(f"{value} {name}" for name, value in sorted(outcome.counts.items())))
        for error in report.get("errors", []):
            log.warning("coursepack: %s: block %s failed: %s", course_id, error.get("block"), error.get("message"))

        target = setting("PUBLISH_TARGET")
        if target:
            # A build with failed blocks still publishes: their previous archives were kept.
            publish_report = os.path.join(root, "publish-report.json")
            arguments = [binary, "publish", published, "--to", target, "--report", publish_report]
            if setting("ENDPOINT_URL"):
                arguments += ["--endpoint-url", setting("ENDPOINT_URL")]
                if setting("PATH_STYLE"):
                    arguments += ["--path-style"]
            if setting("AWS_PROFILE"):
                arguments += ["--profile", setting("AWS_PROFILE")]
            publishing = run(arguments, setting("PUBLISH_TIMEOUT_SECONDS"))
            outcome.publish_exit = publishing.returncode
            outcome.publish_counts = publish_counts(read_json(publish_report))
            if publishing.returncode == 2:
                raise CannotBuild(f"coursepack publish exited 2: {publishing.stderr.strip()[-2000:]}")
            log.info("coursepack: %s: published to %s (exit %s): %s", course_id, target, publishing.returncode,
                     ", ".join(f"{value} {name}" for name, value in sorted(outcome.publish_counts.items())))
        return outcome
    finally:
        shutil.rmtree(export_root, ignore_errors=True)
