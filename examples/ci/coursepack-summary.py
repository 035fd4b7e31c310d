#!/usr/bin/env python3
"""Prints a Markdown summary of a coursepack build and publish from their --report files, for a
CI job summary: coursepack-summary.py build-report.json [publish-report.json]."""
import json
import sys


def load(path):
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


build = load(sys.argv[1]) if len(sys.argv) > 1 else None
publish = load(sys.argv[2]) if len(sys.argv) > 2 else None
lines = ["## coursepack", ""]
if build is None:
    lines.append("No build report: the build did not run or could not read the course.")
else:
    lines.append(f"Course `{build.get('course_id', '?')}`, published at {build.get('published_at', '?')}.")
    lines += ["", "| build | count |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in sorted(build.get("counts", {}).items())]
    for kind in ("errors", "warnings"):
        items = build.get(kind, [])
        if items:
            lines += ["", f"**{len(items)} {kind}**", ""]
            lines += [f"- `{item.get('file', '')}` ({item.get('block', '')}): {item.get('message', '')}" for item in items[:50]]
if publish is not None:
    def count(value):
        return len(value) if isinstance(value, list) else value
    published = {"uploaded": count(publish.get("uploads", [])), "bytes uploaded": publish.get("bytes_uploaded", 0),
                 "unchanged": count(publish.get("unchanged", 0)), "deleted": count(publish.get("deleted", [])),
                 "kept for the grace period": count(publish.get("scheduled_deletions", []))}
    lines += ["", f"Published to `{publish.get('target', '?')}`.", "", "| publish | count |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in published.items()]
print("\n".join(lines))
