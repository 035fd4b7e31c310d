#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets in Fuzz/ with address sanitizer and runs each for
# FUZZ_SECONDS (default 60) on a seed corpus drawn from the demo course and the example course.
# Crashes land in fuzz/crashes/<target>/; each one found becomes a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
# Seconds one input may take before libFuzzer calls it a hang: wall-clock time, so on a machine
# shared with builds (the fuzzers run nice'd) a longer one keeps starvation from looking a hang.
timeout="${FUZZ_TIMEOUT:-10}"
targets="${FUZZ_TARGETS:-FuzzOLX FuzzLinks FuzzTarGz FuzzZip FuzzManifest FuzzOutbox}"
demo=../shared/corpus/openedx-demo-course/course
work=fuzz
mkdir -p "$work"

(cd Fuzz && swift build -c debug --build-path ../.build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)

copy_seeds() {
  local corpus=$1
  shift
  for f in "$@"; do cp "$f" "$corpus/$(printf '%s' "$f" | md5sum | cut -c1-16)"; done
}

# Seeds are (re)written on every run, so a corpus kept from an earlier run gets new seeds too;
# each hostile seed is a case that once crashed or ran unbounded (issue 17).
seed() {
  local target=$1 corpus=$work/corpus/$1
  mkdir -p "$corpus"
  case $target in
    FuzzOLX)
      copy_seeds "$corpus" $(find "$demo" examples -name '*.xml' | sort | sed -n '1,300p')
      python3 - "$corpus" <<'PY'
import sys
out = sys.argv[1]
seeds = {
    "doctype-quoted": '<!DOCTYPE html [ <!ENTITY e "]>"> <!-- ]> it\'s --> ]>\n<html a="1">x</html>',
    "many-attributes": "<html" + "".join(f' a{i}="{i}"' for i in range(15000)) + "/>",
    "nfc-nfd-attributes": '<a caf\u00e9="1" cafe\u0301="2"/>',
    "duplicate-attribute": '<a x="1" x="2"/>',
}
for name, text in seeds.items():
    open(f"{out}/issue17-{name}.xml", "w", encoding="utf-8").write(text)
PY
      ;;
    FuzzLinks) copy_seeds "$corpus" $(find "$demo/html" examples "$demo/static" -name '*.html' -o -name '*.css' | sort | sed -n '1,300p') ;;
    FuzzTarGz)
      tar czf "$corpus/example.tar.gz" -C examples coursepack-101
      for d in chapter sequential vertical; do tar czf "$corpus/$d.tar.gz" -C "$demo/.." "course/course.xml" "course/$d"; done
      python3 - "$corpus" <<'PY'
import gzip, sys
out = sys.argv[1]
def header(name, typeflag, size_field):
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    h[100:108] = b"0000644\0"; h[108:116] = b"0000000\0"; h[116:124] = b"0000000\0"
    h[124:136] = size_field
    h[136:148] = b"00000000000\0"
    h[156] = ord(typeflag)
    h[257:263] = b"ustar\0"; h[263:265] = b"00"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)
course = b'<course url_name="r" org="O" course="N"/>'
first = header("course/course.xml", "0", b"%011o\0" % len(course)) + course + bytes(-len(course) % 512)
for kind in "5gK0x":
    huge = header("course/x", kind, b"\x80" + (2**64 - 1).to_bytes(11, "big"))
    with gzip.GzipFile(f"{out}/issue17-huge-{kind}.tar.gz", "wb", mtime=0) as f:
        f.write(first + huge + bytes(1024))
PY
      ;;
    FuzzZip)
      python3 - "$corpus" <<'PY'
import struct, sys, zipfile, zlib
out = sys.argv[1]
for i, (method, names) in enumerate([(zipfile.ZIP_STORED, ["a.txt"]), (zipfile.ZIP_DEFLATED, ["index.html", "static/x.css"]), (zipfile.ZIP_DEFLATED, ["d/", "d/e.txt"])]):
    with zipfile.ZipFile(f"{out}/seed{i}.zip", "w", method) as z:
        for n in names:
            z.writestr(n, "" if n.endswith("/") else ("hello " * 50))
eocd64 = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
open(f"{out}/issue17-zip64-locator.zip", "wb").write(bytes(100) + struct.pack("<IIQI", 0x07064b50, 0, 2**64 - 16, 1) + eocd64)
# A normal entry, then one whose ZIP64 sizes are 2^64 - 1.
body = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0x800, 0, 0, 33, zlib.crc32(b"hello"), 5, 5, 5, 0) + b"a.txt" + b"hello"
cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031E, 20, 0x800, 0, 0, 33, zlib.crc32(b"hello"), 5, 5, 5, 0, 0, 0, 0, 0o100644 << 16, 0) + b"a.txt"
extra = struct.pack("<HHQQ", 1, 16, 2**64 - 1, 2**64 - 1)
cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031E, 45, 0x800, 0, 0, 33, 0, 0xFFFFFFFF, 0xFFFFFFFF, 5, len(extra), 0, 0, 0, 0o100644 << 16, 0) + b"b.txt" + extra
open(f"{out}/issue17-zip64-sizes.zip", "wb").write(body + cd + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 2, 2, len(cd), len(body), 0))
# Many small entries of zeros: a bomb only as a whole.
with zipfile.ZipFile(f"{out}/issue17-small-bombs.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for i in range(64):
        z.writestr(f"z{i}.bin", bytes(64 << 10))
PY
      ;;
    FuzzManifest)
      python3 - "$corpus" <<'PY'
import json, sys
out = sys.argv[1]
sha = "ab" * 32
def block(i, archive, **extra):
    b = {"usage_id": f"block-v1:O+N+R+type@html+block@b{i}", "type": "html", "display_name": f"B{i}", "parents": [],
         "archive": archive, "size": 100, "sha256": sha, "content_hash": sha, "last_modified": "2026-01-01T00:00:00Z"}
    b.update(extra)
    return b
def manifest(blocks, **extra):
    m = {"schema_version": 2, "course_id": "course-v1:O+N+R", "published_at": "2026-01-01T00:00:00Z", "generator": "coursepack 1", "blocks": blocks}
    m.update(extra)
    return json.dumps(m, sort_keys=True, indent=2)
seeds = {
    "good": manifest([block(0, "html/intro.zip"), block(1, "problem/p-0123abcd.zip"), block(2, None, offline=False, reason="lti")],
                     runtime={"archive": "runtime/0123456789abcdef.zip", "size": 9, "sha256": sha, "content_hash": sha}),
    "type-folder": manifest([block(0, "html.zip")]),
    "nested": manifest([block(0, "html/a.zip"), block(1, "html/a/b.zip")]),
    "case-collision": manifest([block(0, "html/A.zip"), block(1, "html/a.zip")]),
    "dotdot": manifest([block(0, "../html/a.zip"), block(1, "html/../../x.zip")]),
    "duplicate-id": manifest([block(0, "html/a.zip"), block(0, "html/b.zip")]),
    "huge-size": manifest([block(0, "html/a.zip", size=2**64 - 1)]),
    "manifest-name": manifest([block(0, "manifest.json"), block(1, ".coursepack-sync/x.zip")]),
}
for name, text in seeds.items():
    open(f"{out}/issue17-{name}.json", "w").write(text)
PY
      ;;
    FuzzOutbox)
      python3 - "$corpus" <<'PY'
import json, sys
out = sys.argv[1]
def line(i, state="pending", ts="2026-11-23T10:00:00.000Z"):
    return json.dumps({"entry": {"id": f"a{i}", "usage_id": "block-v1:O+N+R+type@problem+block@p", "content_hash": "ab" * 32,
                                 "timestamp": ts, "fields": {"input_p_2_1": ["x"], "input_p_3_1[]": ["a", "b"]},
                                 "state": state, "attempts": 0}}, sort_keys=True)
journal = "\n".join([line(0), line(1, ts="2026-11-23T09:00:00Z"), line(0, "sending"), line(0, "sent")]) + "\n"
open(f"{out}/journal.jsonl", "w").write(journal)
open(f"{out}/cut-short.jsonl", "w").write(journal + line(2)[:40])
open(f"{out}/same-timestamp.jsonl", "w").write(line(3) + "\n" + line(4) + "\n\n\n" + "{}\n[]\nnull\n")
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
      -max_total_time="$seconds" -max_len=262144 -timeout="$timeout" -rss_limit_mb=2048 \
      -artifact_prefix="$work/crashes/$target/" -print_final_stats=1 2>&1 | tee "$work/$target.log" | grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss|==.*ERROR|SUMMARY)"; then
    :
  fi
  # The run count is the number the note on a fuzz run reports: print it whatever grep kept.
  echo "   $target: $(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target.log" | tail -1) inputs run"
  # Any artifact counts: a crash, a hang (timeout-*) or memory past the limit (oom-*).
  found=$(find "$work/crashes/$target" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  if [ -n "$found" ]; then
    echo "!! $target found: $found"
    status=1
  fi
done
exit $status
