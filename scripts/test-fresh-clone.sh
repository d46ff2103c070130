#!/usr/bin/env bash
# A script the README gives users, run alone in a fresh clone of this
# repository: nothing made before (.venv, build/, node_modules, dist/) is
# there, so the script must make what it needs itself. Part of scripts/test.sh,
# with the default command, the README's way to make the wheel:
#
#   scripts/test-fresh-clone.sh [SCRIPT ARGS...]   (default: scripts/build-wheel.sh x86_64)
#
# The clone is of HEAD, with the working tree's uncommitted changes to tracked
# files applied, in a temporary folder removed afterwards. What stays cheap: the
# build directory is build/ as in this tree, so the compiler cache of this tree's
# build answers every compile (CCACHE_BASEDIR makes paths relative); npm and pip
# reuse their download caches. GA_FRESH_CLONE_KEEP=1 keeps the clone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmd=("$@")
[ ${#cmd[@]} -gt 0 ] || cmd=(scripts/build-wheel.sh "$(uname -m)")
work=$(mktemp -d "${TMPDIR:-/tmp}/graph-ascend-fresh.XXXXXX")
clone="$work/graph-ascend"
cleanup() {
  if [ "${GA_FRESH_CLONE_KEEP:-0}" = 1 ]; then echo "test-fresh-clone: kept $clone"; else rm -rf "$work"; fi
}
trap cleanup EXIT

git clone -q --no-checkout "$root" "$clone"
git -C "$clone" checkout -q --detach "$(git -C "$root" rev-parse HEAD)"
if ! git -C "$root" diff --quiet HEAD; then
  git -C "$root" diff --binary HEAD | git -C "$clone" apply
fi

# Nothing of this tree's environment: the clone's own paths only.
while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(GA_[A-Z0-9_]*\)=.*/\1/p' | grep -vx GA_JOBS)
unset VIRTUAL_ENV PYTHONPATH
export GA_WHEEL_BUILD_DIR="$clone/build"  # build-wheel.sh's; the layout of this tree's build/ for the cache

started=$SECONDS
log="$work/run.log"
if ! (cd "$clone" && "${cmd[@]}") >"$log" 2>&1; then
  tail -40 "$log" >&2
  echo "test-fresh-clone: '${cmd[*]}' failed in a fresh clone ($clone)" >&2
  exit 1
fi
echo "test-fresh-clone: '${cmd[*]}' works in a fresh clone ($((SECONDS - started)) s)"

# The default command's product: a wheel with both executables and the page.
if [ "${cmd[0]}" = scripts/build-wheel.sh ]; then
  arch=${cmd[1]:-$(uname -m)}
  wheel=$(ls "$clone"/dist/graph_ascend-*-manylinux_*_"$arch".whl 2>/dev/null | head -1 || true)
  [ -n "$wheel" ] || { echo "test-fresh-clone: no $arch wheel in the clone's dist/" >&2; exit 1; }
  listing=$(python3 -m zipfile -l "$wheel")
  for member in graph_ascend_plugin/_bin/graph-ascend graph_ascend_plugin/_bin/graph-ascend-server \
    graph_ascend_plugin/static/index.html; do
    grep -q "^$member " <<<"$listing" || { echo "test-fresh-clone: $(basename "$wheel") lacks $member" >&2; exit 1; }
  done
  echo "test-fresh-clone: $(basename "$wheel") holds both executables and the page"
fi
