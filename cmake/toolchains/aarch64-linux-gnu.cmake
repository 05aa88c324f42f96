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
# picks the emulated core. Do not pass -L /usr/aarch64-linux-gnu: oneTBB programs then hang at
# exit.
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64)
