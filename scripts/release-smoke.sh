#!/usr/bin/env bash
# The release binaries, built as operators build them (`make release`), on the example course:
# build, sync into a fresh device folder, sync again (nothing to do), verify. Debug test runs
# cannot see what only optimized code does (a release-only crash once hid here).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product coursepack
swift build -c release --product coursepack-sync
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
bin=.build/release/coursepack
"$bin" build examples/coursepack-101 --out "$scratch/out" --published-at 2026-11-22T10:00:00Z -q
"$bin" verify "$scratch/out"
"$bin" sync "$scratch/out" --to "$scratch/device"
"$bin" sync "$scratch/out" --to "$scratch/device"
"$bin" status "$scratch/device" --verify
echo "release smoke: build, sync, no-op sync and verify passed"
