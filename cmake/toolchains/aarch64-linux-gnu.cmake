# Cross-compiling for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu and the multiarch
# arm64 -dev packages (tools/test_arm.sh installs both). No sysroot: Debian puts arm64
# libraries under /usr/lib/aarch64-linux-gnu, found through CMAKE_LIBRARY_ARCHITECTURE.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# ctest (and gtest_discover_tests) run the test binaries through user-mode qemu; QEMU_CPU
# picks the emulated core. Do not pass -L /usr/aarch64-linux-gnu (or set QEMU_LD_PREFIX to it):
# the loader there (Debian's libc6-arm64-cross) then loads the libc of libc6:arm64 from
# /lib/aarch64-linux-gnu, a different glibc build, and any program that starts a thread hangs
# (with more than one thread, so the suite and every multithreaded Context); without -L qemu
# runs libc6:arm64's own loader.
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64)
