# Cross-compiling for 64-bit ARM Linux with Debian's clang-19 and lld, the way the Android NDK's
# clang builds for phones: same compiler family, same linker. It uses the libstdc++ and the
# multiarch arm64 -dev packages of the GCC cross toolchain (tools/install_deps.sh --arm), found
# by clang's --target without a sysroot. Highway 1.0.3 compiles only its baseline (NEON) under
# clang; with EDGEATTN_FETCH_HIGHWAY (Highway 1.4, clang >= 17) dispatch picks NEON, NEON_BF16,
# SVE, SVE2, ... at run time. See docs/arm.md.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
# EDGEATTN_CLANG_VERSION picks the clang (aarch64-linux-clang14.cmake sets 14, the clang of NDKs
# before r26); lld of the same version links.
if(NOT DEFINED EDGEATTN_CLANG_VERSION)
  set(EDGEATTN_CLANG_VERSION 19)
endif()
set(CMAKE_C_COMPILER clang-${EDGEATTN_CLANG_VERSION})
set(CMAKE_CXX_COMPILER clang++-${EDGEATTN_CLANG_VERSION})
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT -fuse-ld=lld-${EDGEATTN_CLANG_VERSION})
set(CMAKE_SHARED_LINKER_FLAGS_INIT -fuse-ld=lld-${EDGEATTN_CLANG_VERSION})
set(CMAKE_MODULE_LINKER_FLAGS_INIT -fuse-ld=lld-${EDGEATTN_CLANG_VERSION})
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# As in aarch64-linux-gnu.cmake: ctest runs the binaries through user-mode qemu (QEMU_CPU picks
# the core); no -L (QEMU_LD_PREFIX): that pairs another glibc's loader with libc6:arm64's libc,
# and any program that starts a thread hangs (aarch64-linux-gnu.cmake says more).
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64)
