#!/usr/bin/env bash
# Cross-builds edgeattn for aarch64 and runs the test suite under qemu-aarch64 once per CPU
# model, so that every ARM kernel path runs: NEON without and with the dot product, SVE, SVE2,
# and the fixed-width SVE2_128 and SVE_256 targets. Prints the Highway target, the int8 kernels
# the CPU runs and the chosen one for each run; fails if any run fails. Every kernel test runs on
# every ARM target (and within it, every kernel the CPU runs); the rest of the suite runs once,
# on the most common phone CPU class (NEON with the dot product), without the tests whose cost is
# the scalar float reference or the fast path on large shapes (full contract shapes, options
# against the reference, the bench's reference policy), the soak and the allocation counting,
# which stay in the native run (qemu is 150-1700x slower), and the death tests, whose child
# re-executes the test binary, which user-mode qemu cannot do.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh --arm
cmake --preset aarch64 >/dev/null && cmake --build --preset aarch64
slow='ContractShapes|OutlierChannelsOnBert|MatchReference|ReferencePolicy|QuietWhenIdle|Soak|NoAllocation|DeathTest'
kernels='TestGroup/'  # the per-target kernel tests (HWY_EXPORT_AND_TEST_P)
run() {  # QEMU_CPU, then ctest's selection
  local cpu=$1
  shift
  info=$(QEMU_CPU=$cpu qemu-aarch64 build/aarch64/tools/edgeattn info)
  target=$(sed -n 's/^highway chosen: *//p' <<<"$info")
  int8=$(sed -n 's/^int8 kernels: *//p' <<<"$info")
  chosen=$(sed -n 's/^int8 chosen: *//p' <<<"$info")
  echo "== QEMU_CPU=$cpu: Highway target $target, int8 kernels $int8, chosen $chosen ($*)"
  QEMU_CPU=$cpu ctest --test-dir build/aarch64 -j2 "$@" --timeout 900 \
    --output-on-failure --no-tests=error | tail -n 3
}
run neoverse-n1 -E "$slow"
for cpu in cortex-a53 a64fx max max,sve-default-vector-length=16 \
           max,sve-default-vector-length=32; do
  run "$cpu" -R "$kernels"
done
