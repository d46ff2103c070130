#!/usr/bin/env bash
# Linker launcher for GRAPH_ASCEND_PORTABLE (cmake/Portable.cmake):
#   portable-link.sh [--glibc-sysroot DIR] <c++> <flags> <objects> -o <exe> <libs>
# runs the link command CMake gives it with every library except glibc's taken
# from its static archive, libstdc++ and libgcc linked in, and the libraries in
# one group (static archives then resolve each other in any order: abseil, gRPC
# and protobuf refer both ways). A shared library without a static archive next
# to it stops the link: the executable would need it on the user's machine.
# With --glibc-sysroot, glibc (crt files, libc.so and the libraries glibc 2.34
# later folded into it) comes from DIR (scripts/glibc-sysroot.sh) instead of
# the compiler's own: its flags go first, ahead of any -L CMake passes.
set -euo pipefail
glibc='^(c|m|dl|pthread|rt|util|resolv)$'
sysroot=""
if [ "${1:-}" = --glibc-sysroot ]; then
  sysroot=$2
  shift 2
fi
out=("$1")
shift
tail=()
if [ -n "$sysroot" ]; then
  multiarch=$("${out[0]}" -dumpmachine)
  out+=("-B$sysroot/usr/lib/$multiarch/" "-L$sysroot/usr/lib/$multiarch" "-L$sysroot/lib/$multiarch" "--sysroot=$sysroot")
  tail=(-Wl,--push-state,--as-needed -lpthread -ldl -lrt -Wl,--pop-state)
fi
grouped=0
for arg in "$@"; do
  lib=""
  case "$arg" in
    -l*) lib=${arg#-l} ;;
    /*.so | /*.so.*) lib=$(basename "$arg"); lib=${lib#lib}; lib=${lib%%.so*} ;;
  esac
  if [ -n "$lib" ] || [[ "$arg" == *.a ]]; then
    if [ "$grouped" -eq 0 ]; then
      out+=(-Wl,--start-group)
      grouped=1
    fi
  fi
  if [ -z "$lib" ] || [[ "$lib" =~ $glibc ]]; then
    out+=("$arg")
  elif [[ "$arg" == /* ]]; then
    archive="$(dirname "$arg")/lib$lib.a"
    if [ ! -f "$archive" ]; then
      echo "portable-link: $arg has no static archive ($archive); install its -dev package" >&2
      exit 1
    fi
    out+=("$archive")
  else
    out+=(-Wl,-Bstatic "$arg" -Wl,-Bdynamic)
  fi
done
[ "$grouped" -eq 1 ] && out+=(-Wl,--end-group)
exec "${out[@]}" "${tail[@]}" -static-libstdc++ -static-libgcc
