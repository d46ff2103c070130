#!/usr/bin/env bash
# Builds the GRAPH_ASCEND page into frontend/dist/index.html (npm ci only when
# frontend/package-lock.json changed). Used by install-plugin.sh and build-wheel.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command -v npm >/dev/null 2>&1 || "$root/scripts/install-deps.sh" >/dev/null
cd "$root/frontend"
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat node_modules/.lock.sha 2>/dev/null)" != "$lock_sum" ]; then
  echo "build-page: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > node_modules/.lock.sha
fi
npm run --silent build >/dev/null
