#!/usr/bin/env bash
# Makes sure the system packages coursepack builds and tests with are present: installs them
# with apt-get when running as root, otherwise says exactly what to install.
set -euo pipefail

missing=()
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
# The page runtime (jQuery, KaTeX) every build bundles for pages that need it.
[ -f /usr/share/javascript/jquery/jquery.min.js ] || missing+=(libjs-jquery)
[ -f /usr/share/javascript/katex/katex.min.js ] || missing+=(libjs-katex)
if [ "${1:-}" = "--bench" ]; then
  command -v zip >/dev/null || missing+=(zip)
  command -v unzip >/dev/null || missing+=(unzip)
  [ -x /usr/bin/time ] || missing+=(time)
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
fi
if [ "${1:-}" = "--test" ]; then
  command -v unzip >/dev/null || missing+=(unzip)
  command -v zip >/dev/null || missing+=(zip)
  command -v python3 >/dev/null || missing+=(python3)
  command -v tar >/dev/null || missing+=(tar)
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  # The browser tests: Debian's headless Chromium and its WebDriver.
  command -v chromium >/dev/null || missing+=(chromium)
  command -v chromedriver >/dev/null || [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "coursepack needs: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

if [ "${1:-}" = "--test" ]; then
  # jsonschema validates manifests; selenium drives Chromium; pytest runs the browser tests.
  python_missing=()
  python3 -c "import jsonschema" 2>/dev/null || python_missing+=(jsonschema)
  python3 -c "import selenium" 2>/dev/null || python_missing+=(selenium)
  python3 -c "import pytest" 2>/dev/null || python_missing+=(pytest)
  # The publish tests run a real S3 protocol server on loopback (moto_server, with boto3 to set it up).
  { command -v moto_server >/dev/null && python3 -c "import moto, boto3" 2>/dev/null; } || python_missing+=("moto[server]")
  if [ ${#python_missing[@]} -gt 0 ]; then
    echo "installing Python packages: ${python_missing[*]}"
    python3 -m pip install -q "${python_missing[@]}"
  fi
fi
