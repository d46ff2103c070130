#!/usr/bin/env bash
# Browser tests: Playwright (npm) driving Debian's Chromium against a real
# tensorboard with the plugin installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f "$root/frontend/package.json" ]; then
  echo "test-browser: no frontend yet"
  exit 0
fi
cd "$root/frontend"
npx playwright test
