#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, builds in Release and runs every
# test, then runs the threading tests under ThreadSanitizer on the std::thread executor (Debian's
# oneTBB is not instrumented for TSan, so oneTBB-backed tests are left out of that run), and
# finally cross-builds for aarch64 and runs the suite under qemu on six ARM CPU models.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
cmake --preset test && cmake --build --preset test && ctest --preset test
cmake --preset tsan >/dev/null && cmake --build --preset tsan && ctest --preset tsan
tools/test_arm.sh
