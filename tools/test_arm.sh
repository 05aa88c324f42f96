#!/usr/bin/env bash
# Cross-builds edgeattn for aarch64 and runs the test suite under qemu-aarch64 once per CPU
# model, so that every ARM kernel path runs: NEON without and with the dot product, SVE, SVE2,
# and the fixed-width SVE2_128 and SVE_256 targets. Prints the Highway target, the int8 kernels
# the CPU runs and the chosen one for each run; fails if any run fails. Every kernel test runs on
# every ARM target (and within it, every kernel the CPU runs); the rest of the suite runs once, on the most common phone CPU class (NEON with the dot product), without
# the tests whose cost is the scalar float reference or the fast path on large shapes (full
# contract shapes, options against the reference, the bench's reference policy), the soak and
# the allocation counting, which stay in the native run (qemu is 150-1700x slower), and the death
# tests, whose child re-executes the test binary, which user-mode qemu cannot do.
#   tools/test_arm.sh           g++ and Debian's Highway 1.0.3 (preset aarch64)
#   tools/test_arm.sh --clang   clang-19 + lld and Highway 1.4.0 from source (preset
#                               aarch64-clang), as an Android NDK build: only the kernel tests,
#                               on three models whose targets or int8 kernels differ (NEON without
#                               and with the dot product, NEON_BF16); the g++ build runs the rest
#   tools/test_arm.sh --clang --all   the clang build as the g++ one: all models, whole suite
# Either way every CPU model's chosen target is printed, and the run fails unless dispatch
# compiled more than one target and chose different ones on different models.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh --arm
all_cpus=(neoverse-n1 cortex-a53 a64fx max max,sve-default-vector-length=16
          max,sve-default-vector-length=32)
preset=aarch64
configure=()
kernel_cpus=("${all_cpus[@]:1}")
suite_cpu=neoverse-n1  # where the rest of the suite runs
targets=()             # all
if [ "${1:-}" = --clang ]; then
  preset=aarch64-clang
  configure=(-DFETCHCONTENT_SOURCE_DIR_HIGHWAY="$(tools/highway_source.sh)")
  if [ "${2:-}" != --all ]; then
    kernel_cpus=(cortex-a53 neoverse-n1 max)
    suite_cpu=""
    targets=(--target simd_test edgeattn_cli)
  fi
fi
cmake --preset $preset "${configure[@]}" >/dev/null && cmake --build --preset $preset "${targets[@]}"
build=build/$preset
slow='ContractShapes|OutlierChannelsOnBert|MatchReference|ReferencePolicy|QuietWhenIdle|Soak|NoAllocation|DeathTest'
kernels='TestGroup/'  # the per-target kernel tests (HWY_EXPORT_AND_TEST_P)
info() {  # QEMU_CPU, field: a line of `edgeattn info` on that CPU model
  QEMU_CPU=$1 qemu-aarch64 $build/tools/edgeattn info | sed -n "s/^$2: *//p"
}
echo "== $preset: Highway $(info max 'highway version'), compiled $(info max 'highway compiled')"
chosen=()
for cpu in "${all_cpus[@]}"; do
  chosen+=("$(info "$cpu" 'highway chosen')")
  echo "== QEMU_CPU=$cpu: Highway target ${chosen[-1]}, int8 kernels $(info "$cpu" 'int8 kernels')," \
    "chosen $(info "$cpu" 'int8 chosen')"
done
if [ "$(printf '%s\n' "${chosen[@]}" | sort -u | wc -l)" -lt 2 ]; then
  echo "test_arm.sh: $preset chose ${chosen[0]} on every CPU model: no run-time dispatch" >&2
  exit 1
fi
run() {  # QEMU_CPU, then ctest's selection
  local cpu=$1
  shift
  echo "== QEMU_CPU=$cpu: ctest $*"
  QEMU_CPU=$cpu ctest --test-dir $build -j2 "$@" --timeout 900 \
    --output-on-failure --no-tests=error | tail -n 3
}
[ -z "$suite_cpu" ] || run $suite_cpu -E "$slow"
for cpu in "${kernel_cpus[@]}"; do
  run "$cpu" -R "$kernels"
done
