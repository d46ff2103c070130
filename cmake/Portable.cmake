# GRAPH_ASCEND_PORTABLE: the executables users install (bin/graph-ascend,
# bin/graph-ascend-server) link every dependency statically (protobuf, gRPC,
# abseil, RE2, yaml-cpp, zstd, c-ares, OpenSSL, zlib, SQLite when used) and
# libstdc++/libgcc too, so they need nothing but glibc on the target machine.
# Only the link step changes (cmake/portable-link.sh rewrites each shared
# library CMake found into the static archive beside it), so the objects are
# those of the ordinary build and every library someone adds is covered.
# GRAPH_ASCEND_GLIBC_SYSROOT (scripts/glibc-sysroot.sh) is an older glibc to
# link against: the executables then need only that glibc (Debian 11's 2.31)
# though compiled here; cmake/glibc_compat.cc defines the few newer glibc
# symbols Debian 12's archives refer to. Empty: the compiler's own glibc.
set(GRAPH_ASCEND_GLIBC_SYSROOT "" CACHE PATH "glibc to link the portable executables against (scripts/glibc-sysroot.sh)")

function(graph_ascend_portable)
  add_library(ga_glibc_compat OBJECT ${CMAKE_SOURCE_DIR}/cmake/glibc_compat.cc)
  set(launcher ${CMAKE_SOURCE_DIR}/cmake/portable-link.sh)
  if(GRAPH_ASCEND_GLIBC_SYSROOT)
    if(NOT EXISTS "${GRAPH_ASCEND_GLIBC_SYSROOT}/.packages")
      message(FATAL_ERROR "GRAPH_ASCEND_GLIBC_SYSROOT='${GRAPH_ASCEND_GLIBC_SYSROOT}' is not a glibc sysroot: run scripts/glibc-sysroot.sh")
    endif()
    list(APPEND launcher --glibc-sysroot ${GRAPH_ASCEND_GLIBC_SYSROOT})
  endif()
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      set_property(TARGET ${target} PROPERTY CXX_LINKER_LAUNCHER ${launcher})
      target_link_libraries(${target} PRIVATE ga_glibc_compat)
    endif()
  endforeach()
endfunction()
