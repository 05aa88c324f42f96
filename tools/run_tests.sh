#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, builds in Release and runs every
# test (valgrind memcheck included where valgrind is installed) and the README's bench command,
# then
# - the threading tests under ThreadSanitizer on the std::thread executor (Debian's oneTBB is
#   not instrumented for TSan, so oneTBB-backed tests are left out of that run);
# - the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang), built without
#   oneTBB, x86 kernels for AVX3_DL and SSSE3 (16 and 4 lanes; the 8-lane tails run natively),
#   and each libFuzzer target for EDGEATTN_FUZZ_SECONDS;
# - the packaging builds: shared with and without oneTBB (the public-API tests), each installed
#   and used by C and C++ consumers, exports checked;
# - the kernel tests against Highway 1.4.0 built from source (preset hwy14, x86 kernels for
#   AVX3_SPR, AVX3_DL and SSSE3): every kernel and kernel list per target; the rest of the suite
#   reaches Highway only through those kernels' exports (and its aligned allocator), so it runs
#   under 1.0.3 only;
# - an aarch64 cross build, dispatch checked on six ARM CPU models under qemu, the suite on one
#   and the kernel tests per target and vector length (tools/test_arm.sh; the library has every
#   target, the tests leave out SVE_256 and SVE, which only the by-hand --wide run reaches);
# - a report: the aarch64 sizes of the phone and all EDGEATTN_TARGETS choices;
# - a report, not a pass/fail check: llvm-mca's model of the ARM kernels' loops per core.
# Left out for time (CI has 25 minutes on two cores): the clang-19 + lld aarch64 cross build
# against Highway 1.4.0 as an Android NDK builds (run-time dispatch over the ARM targets checked
# on six models, its kernel tests on neoverse-n1 and max), by hand: tools/test_arm.sh --clang
# (about 230 s, 450 CPU s). The g++ aarch64 stage covers the ARM kernels and suite; what only
# that run checks is clang's and lld's build of them and Highway 1.4's ARM dispatch.
set -euo pipefail
cd "$(dirname "$0")/.."
stage() {  # name, command...: runs it and says how long it took, in wall and CPU seconds
  local name=$1
  shift
  # The CPU seconds tell a slow stage from a loaded machine (2 cores: wall >= CPU / 2).
  local TIMEFORMAT="== stage $name: %0R s (CPU %0U s user + %0S s system)"
  time "$@"
}
stage deps tools/install_deps.sh
stage test bash -c 'cmake --preset test && cmake --build --preset test &&
                    ctest --preset test --no-tests=error'
# The README's first command, as written there: the test preset's tree is the release preset's,
# so it builds nothing again and this stage is the bench itself.
readme_bench=$(awk '/^## Two commands/ {s = 1} s && /^```sh/ {getline; print; exit}' README.md)
[[ $readme_bench == *"edgeattn bench"* ]] || { echo "README.md: no bench command" >&2; exit 1; }
stage readme-bench bash -c "$readme_bench"
stage packaging tools/test_packaging.sh
# The Highway 1.4.0 stage builds from the release archive (tools/highway_source.sh); without
# it (no HIGHWAY_ARCHIVE, no shared/deps beside the checkout: exit 3) it is skipped, and says
# so; an archive that is there but not the pinned release, or does not extract, fails the run.
highway14_status=0
highway14=$(tools/highway_source.sh) || highway14_status=$?
if ((highway14_status == 0)); then
  # x86 kernels for 1.4's new AVX3_SPR, for AVX3_DL (the 512-bit target of CPUs without FP16,
  # Zen 4 among them) and for the build's baseline, SSSE3; AVX2's and SSE4's code is Highway
  # code the test stage runs under 1.0.3 (kept out for CI's time).
  stage hwy14 bash -c "cmake --preset hwy14 -DFETCHCONTENT_SOURCE_DIR_HIGHWAY='$highway14' \
                         -DEDGEATTN_DISABLED_TARGETS='HWY_AVX3|HWY_SSE4|HWY_AVX2' >/dev/null &&
                       cmake --build --preset hwy14 --target simd_test &&
                       ctest --preset hwy14 -L '^simd_test\$' --no-tests=error"
elif ((highway14_status == 3)); then
  echo "== stage hwy14: skipped (no Highway 1.4.0 archive)"
else
  echo "== stage hwy14: tools/highway_source.sh failed (exit $highway14_status)" >&2
  exit 1
fi
stage tsan bash -c 'cmake --preset tsan >/dev/null && cmake --build --preset tsan &&
                    ctest --preset tsan'
stage sanitize bash -c 'cmake --preset sanitize >/dev/null && cmake --build --preset sanitize &&
                        ctest --preset sanitize'
stage aarch64 tools/test_arm.sh
stage sizes tools/binary_sizes.sh phone all  # server: one more aarch64 build, run by hand
stage arm-model tools/arm_model.py
