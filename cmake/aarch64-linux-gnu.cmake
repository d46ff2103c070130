# Cross build for aarch64 with Debian's cross compiler (g++-aarch64-linux-gnu)
# against the sysroot scripts/aarch64-sysroot.sh makes (GA_AARCH64_SYSROOT, or
# -DGA_AARCH64_SYSROOT=DIR). Code generators (protoc, grpc_cpp_plugin) run on
# the host. Used with GRAPH_ASCEND_PORTABLE=ON by scripts/build-wheel.sh aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

if(NOT GA_AARCH64_SYSROOT)
  set(GA_AARCH64_SYSROOT "$ENV{GA_AARCH64_SYSROOT}")
endif()
if(NOT IS_DIRECTORY "${GA_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "GA_AARCH64_SYSROOT='${GA_AARCH64_SYSROOT}' is not a sysroot: run scripts/aarch64-sysroot.sh DIR")
endif()
set(GA_AARCH64_SYSROOT "${GA_AARCH64_SYSROOT}" CACHE PATH "Sysroot of the aarch64 -dev packages")
# Passed on to try_compile projects, which read this file again.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES GA_AARCH64_SYSROOT)

# The cross compiler brings glibc (/usr/aarch64-linux-gnu); the libraries come from the sysroot.
set(CMAKE_FIND_ROOT_PATH "${GA_AARCH64_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
include_directories(SYSTEM "${GA_AARCH64_SYSROOT}/usr/include/aarch64-linux-gnu" "${GA_AARCH64_SYSROOT}/usr/include")

set(ENV{PKG_CONFIG_SYSROOT_DIR} "${GA_AARCH64_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${GA_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${GA_AARCH64_SYSROOT}/usr/share/pkgconfig")
