#!/usr/bin/env bash
# The test command: installs everything needed on a fresh Debian 12 machine
# and runs every test (C++, Python, browser). Used by .ci/run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
"$root/scripts/python-env.sh"
status=0
"$root/scripts/test-cpp.sh" || status=1
"$root/scripts/test-python.sh" || status=1
"$root/scripts/test-op-scripts.sh" || status=1
"$root/scripts/test-browser.sh" || status=1
exit $status
