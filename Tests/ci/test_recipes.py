"""Runs the shell steps of the CI recipes in examples/ci/, taken from their YAML (not copied),
against the demo course with a folder as the publish target, so a recipe that drifts from the
CLI fails here. Steps that only set up a CI machine (checkout, install, cache, artifacts) are
the CI service's; the cache is played by keeping the working folder between two runs."""

import json
import os
import shutil
import subprocess

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO = os.path.join(ROOT, "..", "shared", "corpus", "openedx-demo-course", "course")
RECIPES = os.path.join(ROOT, "examples", "ci")


def binary_folder():
    folder = os.environ.get("COURSEPACK_BIN_DIR") or os.path.join(ROOT, ".build", "debug")
    if not os.path.exists(os.path.join(folder, "coursepack")):
        pytest.fail(f"no coursepack in {folder}: run `swift build` first (make test does)")
    return folder


def github_steps():
    workflow = yaml.safe_load(open(os.path.join(RECIPES, "github-actions.yml")))
    job = workflow["jobs"]["bundles"]
    steps = [step for step in job["steps"] if "run" in step and step.get("id") != "install"]
    assert [step["id"] for step in steps] == ["build", "publish", "summary"]
    return workflow["env"], [step["run"] for step in steps]


def gitlab_steps():
    recipe = yaml.safe_load(open(os.path.join(RECIPES, "gitlab-ci.yml")))
    job = recipe["coursepack-bundles"]
    # before_script installs coursepack on the CI machine; script is what the job does.
    return job["variables"], ["\n".join(job["script"])]


def run_recipe(variables, scripts, workdir, target, extra_env=None):
    env = {**os.environ, **{k: str(v) for k, v in variables.items()}}
    env.update({
        "COURSE_DIR": os.path.join(workdir, "course"),
        "PUBLISH_TARGET": target,
        "COURSEPACK_SUMMARY": os.path.join(RECIPES, "coursepack-summary.py"),
        "PATH": binary_folder() + os.pathsep + os.environ["PATH"],
        "GITHUB_STEP_SUMMARY": os.path.join(workdir, "summary.md"),
        "GITHUB_OUTPUT": os.path.join(workdir, "output"),
    })
    env.update(extra_env or {})
    statuses = []
    for script in scripts:
        # GitHub's default shell for run steps; GitLab runs script lines with errexit as well.
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                                cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
        statuses.append((result.returncode, result.stdout, result.stderr))
    return statuses


@pytest.mark.parametrize("recipe", ["github", "gitlab"])
def test_recipe_builds_publishes_and_summarises(recipe, tmp_path):
    variables, scripts = github_steps() if recipe == "github" else gitlab_steps()
    workdir, target = tmp_path / "repo", str(tmp_path / "webroot")
    workdir.mkdir()
    shutil.copytree(DEMO, workdir / "course")

    first = run_recipe(variables, scripts, str(workdir), target)
    assert all(status == 0 for status, _, _ in first), first
    # publish puts the course into its own folder of the target and reports where.
    published = json.load(open(workdir / "publish-report.json"))["manifest"]
    assert os.path.dirname(published) == os.path.join(target, "course-v1_3AOpenedX_2BDemoX_2BDemoCourse-bad7ea59")
    manifest = json.load(open(published))
    assert manifest["course_id"] == "course-v1:OpenedX+DemoX+DemoCourse"
    assert json.load(open(os.path.join(target, "courses.json")))["courses"][manifest["course_id"]]["manifest"] == \
        os.path.relpath(published, target)
    report = json.load(open(workdir / "build-report.json"))
    assert report["counts"]["built"] > 250
    summary = (workdir / "summary.md").read_text() if recipe == "github" else first[-1][1]
    assert f"| built | {report['counts']['built']} |" in summary
    assert (workdir / "publish-report.json").is_file()
    uploaded = len(json.load(open(workdir / "publish-report.json"))["uploads"])
    # 293 block archives, the page runtime, the search index, each course file content once, and
    # the parts of the split manifest.
    parts = json.load(open(os.path.join(os.path.dirname(published), "manifest-index.json")))["parts"]
    assert uploaded == 295 + len(manifest["files"]) + len(parts) and f"| uploaded | {uploaded} |" in summary

    # The next run with the cache restored (the same working folder) rebuilds nothing.
    second = run_recipe(variables, scripts, str(workdir), target)
    assert all(status == 0 for status, _, _ in second), second
    assert json.load(open(workdir / "build-report.json"))["counts"]["built"] == 0


def test_strict_recipe_fails_on_warnings_but_still_reports(tmp_path):
    variables, scripts = github_steps()
    workdir = tmp_path / "repo"
    workdir.mkdir()
    shutil.copytree(DEMO, workdir / "course")
    results = run_recipe(variables, scripts, str(workdir), str(tmp_path / "webroot"), {"COURSEPACK_STRICT": "true"})
    # The demo course has one unresolved link: --strict makes the build exit 1; the job still
    # publishes what was built, writes the summary, and fails at the end.
    assert [status for status, _, _ in results] == [0, 0, 1]
    assert "warnings" in (workdir / "summary.md").read_text()
