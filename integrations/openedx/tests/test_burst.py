"""Many courses at once (issue 33): 20 copies of the demo course published in a burst to two real
Celery worker processes over a real redis (broker and shared cache), with the real coursepack
binary building and publishing each course. See tests/burst.py for the harness."""

import os
import sqlite3
import time

import pytest
from django.core.cache import cache

from coursepack_openedx.course_lock import lock_key
from coursepack_openedx.runner import course_folder, target_folder

from . import burst
from .test_plugin import coursepack_binary

COURSES = 20
WORKERS = 2
DEBOUNCE = 3
STALE_LOCK_SECONDS = 10


def overlaps(a, b):
    return a["start"] < b["end"] and b["start"] < a["end"]


@pytest.fixture
def harness(settings, tmp_path, real_broker):
    """This process plays Studio (it sends the signals, so its cache and Celery app are the
    workers' redis); the workers run under tests.worker_settings with the same config."""
    _, broker_url = real_broker
    root = str(tmp_path)
    config_path, config = burst.write_config(root, coursepack_binary(), broker_url, DEBOUNCE, 60, 1.0)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": config["cache_url"]}}
    settings.COURSEPACK = config["coursepack"]
    courses = burst.make_courses(root, COURSES)
    workers = burst.start_workers(root, config_path, WORKERS)
    try:
        yield root, courses, config
    finally:
        burst.stop_workers(workers)
        cache.clear()


@pytest.mark.django_db
def test_a_burst_of_twenty_courses_builds_each_once_newest_last_never_overlapping(harness):
    root, courses, config = harness
    # A worker killed while it built the first course left that course's lock behind: the
    # course's build, first in the queue, finds it taken.
    stale = courses[0]
    stale_until = time.time() + STALE_LOCK_SECONDS
    cache.add(lock_key(stale), {"token": "killed-worker", "expires": stale_until}, timeout=STALE_LOCK_SECONDS)

    began = time.time()
    for course in courses:
        burst.publish(root, course, 1)
    # Four courses are published again while a build of theirs is running (after its export).
    republished = burst.republish_during_builds(root, courses[1:], 4, timeout=180)
    assert len(republished) == 4
    expected = {course: 2 if course in republished else 1 for course in courses}
    burst.wait_for(lambda: burst.finished(root, expected), 300, "every course built at its newest version")
    time.sleep(DEBOUNCE + 3)  # a superfluous build would have started by now

    builds = burst.read_log(root)
    assert set(builds) == {course_folder(course) for course in courses}
    for course in courses:
        runs = builds[course_folder(course)]
        # Once per publish burst, and the newest publish last.
        assert [run["version"] for run in runs] == list(range(1, expected[course] + 1)), (course, runs)
        assert all((run.get("build_exit"), run.get("publish_exit")) == (0, 0) for run in runs), (course, runs)
        # Never two builds of one course at once.
        assert all(earlier["end"] <= later["start"] for earlier, later in zip(runs, runs[1:])), (course, runs)
        assert burst.published_version(root, target_folder(course)) == expected[course]
    # The killed worker's lock held the course back until it expired; then the look that the
    # deferred build asked for at its expiry built it (its turn in the queue came later).
    assert builds[course_folder(stale)][0]["start"] >= stale_until
    # Different courses were built at the same time, in both worker processes.
    everything = [run for runs in builds.values() for run in runs]
    assert len({run["worker"] for run in everything}) == WORKERS
    assert any(overlaps(a, b) for a in everything for b in everything if a["worker"] != b["worker"])
    # Every build is recorded once, as the workers saw it.
    with sqlite3.connect(config["database"]) as database:
        recorded = database.execute("SELECT course_id, trigger, status FROM coursepack_openedx_coursepackrun").fetchall()
    assert sorted(course for course, _, _ in recorded) == sorted(c for c in courses for _ in range(expected[c]))
    assert {status for _, _, status in recorded} == {"succeeded"}
    # A build after a deferral is a "rerun": the killed worker's course was built that way.
    assert {trigger for _, trigger, _ in recorded} <= {"publish", "rerun"}
    assert [trigger for course, trigger, _ in recorded if course == stale] == ["rerun"]
    figures = burst.figures(builds, began)

    # With a worker free: a course is published twice while its build runs. The second
    # publish's build waits for the first, then builds the newest version, once.
    lone = next(course for course in courses[1:] if course not in republished)
    runs = publish_twice_during_one_build(root, lone)
    assert [run["version"] for run in runs] == [1, 2, 4]
    assert all(earlier["end"] <= later["start"] for earlier, later in zip(runs, runs[1:])), runs
    assert burst.published_version(root, target_folder(lone)) == 4

    print(f"\nburst: {COURSES} courses, {WORKERS} worker processes: {figures['courses_per_minute']} courses/min "
          f"({figures['builds']} builds in {figures['seconds']} s; debug coursepack)")


def publish_twice_during_one_build(root, course):
    """Publishes version 2 of course, then versions 3 and 4 while version 2's build (made longer)
    runs; returns the course's builds once version 4's has ended and a superfluous one would
    have started."""
    with open(os.path.join(root, "pause"), "w") as pause:
        pause.write("5")
    burst.publish(root, course, 2)
    burst.wait_for(lambda: [run["version"] for run in burst.read_log(root)[course_folder(course)]][-1:] == [2], 120,
                   "the build of version 2")
    burst.publish(root, course, 3)
    time.sleep(1)
    burst.publish(root, course, 4)
    burst.wait_for(lambda: burst.finished(root, {course: 4}), 180, "the build of version 4")
    time.sleep(DEBOUNCE + 3)
    return burst.read_log(root)[course_folder(course)]
