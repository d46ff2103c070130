#!/usr/bin/env bash
# Linker launcher for GRAPH_ASCEND_PORTABLE (cmake/Portable.cmake): runs the
# link command CMake gives it ("<c++> <flags> <objects> -o <exe> <libs>")
# with every library except glibc's taken from its static archive, libstdc++
# linked in (libgcc_s stays shared, see cmake/Portable.cmake), and the libraries in one group (static archives then
# resolve each other in any order: abseil, gRPC and protobuf refer both ways).
# A shared library without a static archive next to it stops the link: the
# executable would need it on the user's machine.
set -euo pipefail
glibc='^(c|m|dl|pthread|rt|util|resolv)$'
out=()
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
exec "${out[@]}" -static-libstdc++
