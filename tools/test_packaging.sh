#!/usr/bin/env bash
# The library as apps package it, beside the default static oneTBB build of the test stage and
# the sanitize stage's static build without oneTBB (EDGEATTN_WITH_TBB=OFF: the whole suite on
# the std::thread pool):
# - shared, with and without oneTBB: the public-API tests (C API, caller's pool, program) on
#   the shared library.
# Each build's ConsumerPackage test installs it and builds and runs the C++ and C consumers with
# CMake and pkg-config, and checks the exported symbols (tools/check_exports.sh). The kernels
# are compiled for the baseline Highway target only (HWY_COMPILE_ONLY_STATIC): what these
# builds change is packaging and scheduling, which the test stage's kernels do not depend on.
set -euo pipefail
cd "$(dirname "$0")/.."
build() {  # name, cmake options...: configure, build, run its tests but valgrind's
  local name=$1 start=$SECONDS
  shift
  cmake -S . -B "build/$name" -DCMAKE_BUILD_TYPE=Release -DEDGEATTN_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS=-DHWY_COMPILE_ONLY_STATIC=1 "$@" >/dev/null
  cmake --build "build/$name" -j2
  local log=build/$name/ctest.log
  if ! ctest --test-dir "build/$name" -j2 -E '^Valgrind' --output-on-failure --no-tests=error \
    >"$log" 2>&1; then
    cat "$log"
    return 1
  fi
  tail -n 3 "$log"
  echo "== $name: $((SECONDS - start)) s"
}
build shared -DBUILD_SHARED_LIBS=ON
build shared-no-tbb -DBUILD_SHARED_LIBS=ON -DEDGEATTN_WITH_TBB=OFF -DEDGEATTN_BUILD_CLI=OFF
