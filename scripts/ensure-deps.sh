#!/usr/bin/env bash
# Makes sure the system packages coursepack builds and tests with are present: installs them
# with apt-get when running as root, otherwise says exactly what to install.
#
#   ensure-deps.sh           building: zlib, pkg-config, the page runtime's jQuery and KaTeX
#   ensure-deps.sh --test    + everything the test suite runs (make test, .ci/run)
#   ensure-deps.sh --bench   + what make bench compares against
#
# Each need is one line: "package  check", where check is a command that succeeds when the
# package is there. Add a line to add a dependency.
set -euo pipefail

build_needs=(
  "zlib1g-dev   test -f /usr/include/zlib.h"
  "pkg-config   command -v pkg-config"
  "libjs-jquery test -f /usr/share/javascript/jquery/jquery.min.js"   # the page runtime every build bundles
  "libjs-katex  test -f /usr/share/javascript/katex/katex.min.js"     # math rendering in that runtime
  "libsqlite3-dev test -f /usr/include/sqlite3.h"                     # GRDB's SQLite (with FTS5) for coursepack search
)
test_needs=(
  "unzip        command -v unzip"                    # independent archive checks
  "zip          command -v zip"
  "python3      command -v python3"                  # schema validation, zipfile checks, fault server
  "python3-pip  python3 -m pip --version"            # to install jsonschema below
  "tar          command -v tar"                      # tarball fixtures
  "nginx        command -v nginx || test -x /usr/sbin/nginx"   # sync tests serve a real folder
  "strace       command -v strace"                   # the fsync order test traces a real build
  "time         test -x /usr/bin/time"               # peak memory of the 5 GB streaming test
  "diffutils    command -v diff"                     # two builds compared with diff -r
  "util-linux   command -v mount"                    # full-disk test mounts a small tmpfs (needs root)
  "chromium     command -v chromium"                 # the browser tests open every page offline
  "chromium-driver  command -v chromedriver"         # Selenium drives Chromium through it
  "wrk          command -v wrk"                      # load test of coursepack serve from a second process
  "redis-server command -v redis-server"             # the plugin's retry test runs a real Celery worker against it
)
bench_needs=(
  "zip          command -v zip"
  "unzip        command -v unzip"
  "time         test -x /usr/bin/time"
  "nginx        command -v nginx || test -x /usr/sbin/nginx"
  "curl         command -v curl"                     # the sync baseline downloads with curl --parallel
  "redis-server command -v redis-server"             # the plugin burst: Celery workers over a real broker
)

needs=("${build_needs[@]}")
case "${1:-}" in
  --test) needs+=("${test_needs[@]}") ;;
  --bench) needs+=("${bench_needs[@]}") ;;
esac

missing=()
for need in "${needs[@]}"; do
  package=${need%% *}
  check=${need#* }
  check=${check%%#*}
  if ! bash -c "$check" >/dev/null 2>&1 && [[ " ${missing[*]} " != *" $package "* ]]; then
    missing+=("$package")
  fi
done

root=false
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && root=true

if [ ${#missing[@]} -gt 0 ]; then
  if $root; then
    echo "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "coursepack needs: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

# Python packages the tests use, as: module  pip-name. `make bench` needs the plugin's own (its
# burst publishes through the plugin's receivers to Celery workers); a bench on a new machine
# had none and reported the burst as not measured.
python_needs=()
# The Open edX plugin (Django, Celery, openedx-events, the redis client; for its LMS endpoints
# DRF, edx-drf-extensions and PyJWT).
plugin_needs=("django Django" "celery celery" "openedx_events openedx-events" "redis redis" \
  "rest_framework djangorestframework" "edx_rest_framework_extensions edx-drf-extensions" "jwt PyJWT")
case "${1:-}" in
  # selenium drives Chromium; pytest runs the browser tests; PyYAML reads the CI recipes; lxml:
  # the differential test names blocks as the LMS import does (Tests/olx).
  --test) python_needs=("jsonschema jsonschema" "selenium selenium" "pytest pytest" "yaml PyYAML" \
    "pytest_django pytest-django" "lxml lxml" "${plugin_needs[@]}") ;;
  --bench) python_needs=("${plugin_needs[@]}") ;;
esac
if [ ${#python_needs[@]} -gt 0 ]; then
  for pair in "${python_needs[@]}"; do
    module=${pair%% *}
    package=${pair#* }
    if ! python3 -c "import $module" 2>/dev/null; then
      echo "installing the Python $package package (the tests or make bench use it)"
      # Debian's python marks its site-packages as externally managed; the tests need the module
      # wherever python3 finds it.
      python3 -m pip install -q "$package" 2>/dev/null || python3 -m pip install -q --break-system-packages "$package"
    fi
  done
  # The plugin itself, installed so its entry points are registered as in Studio (cms.djangoapp)
  # and the LMS (lms.djangoapp); an install from before the LMS side has only the first.
  if ! python3 -c "from importlib.metadata import entry_points; assert all(any(e.name == 'coursepack' for e in entry_points(group=g)) for g in ('cms.djangoapp', 'lms.djangoapp'))" 2>/dev/null; then
    echo "installing the Open edX plugin from integrations/openedx (its tests need it registered)"
    python3 -m pip install -q -e "$(dirname "$0")/../integrations/openedx" 2>/dev/null || python3 -m pip install -q --break-system-packages -e "$(dirname "$0")/../integrations/openedx"
  fi
fi
if [ "${1:-}" = "--test" ]; then
  # The publish tests run a real S3 protocol server on loopback (moto_server, with boto3 to set it up).
  if ! { command -v moto_server >/dev/null && python3 -c "import moto, boto3" 2>/dev/null; }; then
    echo "installing the Python moto[server] package (the publish tests use it)"
    python3 -m pip install -q "moto[server]" 2>/dev/null || python3 -m pip install -q --break-system-packages "moto[server]"
  fi
fi
