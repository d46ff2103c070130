# GRAPH_ASCEND_PORTABLE: the executables users install (bin/graph-ascend,
# bin/graph-ascend-server) link every dependency statically (protobuf, gRPC,
# abseil, RE2, yaml-cpp, zstd, c-ares, OpenSSL, zlib, SQLite when used) and
# libstdc++/libgcc too, so they need nothing but glibc on the target machine.
# Only the link step changes (cmake/portable-link.sh rewrites each shared
# library CMake found into the static archive beside it), so the objects are
# those of the ordinary build and every library someone adds is covered.
# libgcc_s stays shared: GCC 12's static unwinder (libgcc_eh.a) calls
# _dl_find_object, new in glibc 2.35, and libgcc_s.so.1 is on every system
# (glibc itself needs it). cmake/glibc_compat.cc keeps arc4random (2.36) out.
function(graph_ascend_portable)
  add_library(ga_glibc_compat OBJECT ${CMAKE_SOURCE_DIR}/cmake/glibc_compat.cc)
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      set_property(TARGET ${target} PROPERTY CXX_LINKER_LAUNCHER ${CMAKE_SOURCE_DIR}/cmake/portable-link.sh)
      target_link_libraries(${target} PRIVATE ga_glibc_compat)
    endif()
  endforeach()
endfunction()
