#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets in Fuzz/ with address sanitizer and runs each for
# FUZZ_SECONDS (default 60) on a seed corpus drawn from the demo course and the example course.
# Crashes land in fuzz/crashes/<target>/; each one found becomes a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-FuzzOLX FuzzLinks FuzzTarGz FuzzZip}"
demo=../shared/corpus/openedx-demo-course/course
work=fuzz
mkdir -p "$work"

(cd Fuzz && swift build -c debug --build-path ../.build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)

copy_seeds() {
  local corpus=$1
  shift
  for f in "$@"; do cp "$f" "$corpus/$(printf '%s' "$f" | md5sum | cut -c1-16)"; done
}

seed() {
  local target=$1 corpus=$work/corpus/$1
  [ -d "$corpus" ] && return
  mkdir -p "$corpus"
  case $target in
    FuzzOLX) copy_seeds "$corpus" $(find "$demo" examples -name '*.xml' | sort | sed -n '1,300p') ;;
    FuzzLinks) copy_seeds "$corpus" $(find "$demo/html" examples "$demo/static" -name '*.html' -o -name '*.css' | sort | sed -n '1,300p') ;;
    FuzzTarGz)
      tar czf "$corpus/example.tar.gz" -C examples coursepack-101
      for d in chapter sequential vertical; do tar czf "$corpus/$d.tar.gz" -C "$demo/.." "course/course.xml" "course/$d"; done ;;
    FuzzZip)
      python3 - "$corpus" <<'PY'
import sys, zipfile, io
out = sys.argv[1]
for i, (method, names) in enumerate([(zipfile.ZIP_STORED, ["a.txt"]), (zipfile.ZIP_DEFLATED, ["index.html", "static/x.css"]), (zipfile.ZIP_DEFLATED, ["d/", "d/e.txt"])]):
    with zipfile.ZipFile(f"{out}/seed{i}.zip", "w", method) as z:
        for n in names:
            z.writestr(n, "" if n.endswith("/") else ("hello " * 50))
PY
      ;;
  esac
}

status=0
for target in $targets; do
  seed "$target"
  mkdir -p "$work/crashes/$target"
  echo "== $target for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=0 ".build-fuzz/debug/$target" "$work/corpus/$target" \
      -max_total_time="$seconds" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$work/crashes/$target/" -print_final_stats=1 2>&1 | tee "$work/$target.log" | grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss|==.*ERROR|SUMMARY)"; then
    :
  fi
  if ls "$work/crashes/$target"/crash-* "$work/crashes/$target"/timeout-* >/dev/null 2>&1; then
    echo "!! $target found crashes: $(ls "$work/crashes/$target")"
    status=1
  fi
done
exit $status
