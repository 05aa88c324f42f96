#!/usr/bin/env bash
# Cross-builds edgeattn for aarch64 and runs the tests under qemu-aarch64, so that every ARM
# kernel path runs: NEON without and with the dot product, SVE and SVE2. Prints the Highway
# target, the int8 kernels the CPU runs and the chosen one, and the KV cache's kernels, on six
# CPU models (dispatch); fails if any run fails. The per-target kernel tests run per target on a CPU model that has it: NEON on
# neoverse-n1 (dot product, fp16 arithmetic) and, for the kernels whose lists follow the CPU's
# features, on cortex-a53 (neither); SVE2 and SVE2_128 at 128 bits (the phone cores' length);
# --wide adds SVE_256 at 256 bits (what Neoverse V1 and Graviton 3 choose), SVE at 512 bits
# (A64FX: no CPU with 128-bit vectors has SVE without SVE2) and qemu max's SVE2 at 512, which
# CI leaves out: qemu's SVE emulation costs about ten times as much at 256 bits as at 128 (260 s
# for SVE_256), more at 512; so without --wide the tests are built without SVE_256 and SVE (the
# library keeps them). The rest of the
# suite runs once, on neoverse-n1 (the most common phone CPU class: NEON with the dot product), without the
# tests whose cost is the scalar float reference or the fast path on large shapes (full contract
# shapes, the bench's decode shapes, options and step maths against the reference, the bench's
# reference policy), the soak and the allocation counting, which stay in the native run (qemu is
# 150-1700x slower), and the death tests, whose child re-executes the test binary, which
# user-mode qemu cannot do.
#   tools/test_arm.sh [--wide]    g++ and Debian's Highway 1.0.3 (preset aarch64)
#   tools/test_arm.sh --clang     clang-19 + lld and Highway 1.4.0 from source (preset
#                                 aarch64-clang), as an Android NDK build: only the kernel tests,
#                                 on two models whose targets and int8 kernels differ
#                                 (neoverse-n1, max), built without the fixed-width SVE targets
#                                 (SVE_256, SVE2_128) neither reaches; the g++ build runs the rest
#   tools/test_arm.sh --clang --all   the whole clang build: the suite on neoverse-n1, the kernel
#                                     tests on the other five models
#   tools/test_arm.sh --clang-suites  the whole suite of clang-14's build (preset aarch64-clang14,
#                                     lld-14, Highway 1.4.0; the clang of NDK r24-r25) and then
#                                     clang-19's, each on neoverse-n1 without the slow tests
#                                     above, with each build's and run's seconds; by hand, as
#                                     CI has no time for it
# Either way every CPU model's chosen target is printed, and the run fails unless dispatch
# compiled more than one target and chose different ones on different models; except on
# clang-14, for which Highway 1.4 dispatches statically (run-time dispatch needs clang 17).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh --arm
all_cpus=(neoverse-n1 cortex-a53 a64fx max max,sve-default-vector-length=16
          max,sve-default-vector-length=32)
kernels='TestGroup/'  # the per-target kernel tests (HWY_EXPORT_AND_TEST_P), as ctest lists them
# CPU model, then the targets whose kernel tests run there ('' = all the model has, through
# ctest; ctest:REGEX = those of them whose names match). ctest lists the targets of the CPU its
# discovery ran on (qemu's default, 512-bit SVE), so the fixed-width SVE2_128 and SVE_256 tests
# run from simd_test itself.
# The kernel tests whose kernel lists follow the CPU's features (dot product, fp16, bf16, i8mm).
feature_kernels='(GemmI8|AttentionKv|AttentionKvPack|AttentionArmHalf|AttentionArmI8mm)TestGroup/'
# max's NEON run: i8kv_i8mm_smmla with sdot's P V on the NEON target (neoverse-n1 has no i8mm).
kernel_runs=(cortex-a53 "ctest:$feature_kernels" max,sve-default-vector-length=16 'SVE2 SVE2_128'
             max 'ctest:(AttentionKv|AttentionArmI8mm)TestGroup/.*/NEON( |$)')
suite_cpu=neoverse-n1  # where the rest of the suite runs, kernel tests included
targets=()             # all
presets=(aarch64)
# Targets whose kernel tests no run below reaches, left out of the test executables only
# (EDGEATTN_TEST_DISABLED_TARGETS): the library, and so the dispatch check, keeps them.
tests_skip='HWY_SVE_256|HWY_SVE'
case "${1:-}" in
  --wide)
    kernel_runs+=(max,sve-default-vector-length=32 SVE_256 a64fx SVE max SVE2)
    tests_skip=""
    ;;
  --clang)
    presets=(aarch64-clang)
    kernel_runs=(neoverse-n1 '' max '')
    # ctest's list (discovered on 512-bit SVE) holds no fixed-width SVE target.
    tests_skip='HWY_SVE_256|HWY_SVE2_128'
    if [ "${2:-}" = --all ]; then
      kernel_runs=(cortex-a53 '' a64fx '' max '' max,sve-default-vector-length=16 ''
                   max,sve-default-vector-length=32 '')
      tests_skip=""
    else
      suite_cpu=""
      targets=(--target simd_test edgeattn_cli)
    fi
    ;;
  --clang-suites)
    command -v clang++-14 >/dev/null ||
      { echo "test_arm.sh: --clang-suites needs clang-14 and lld-14" >&2; exit 1; }
    presets=(aarch64-clang14 aarch64-clang)
    kernel_runs=()
    tests_skip=""
    ;;
esac
configure=(-DEDGEATTN_TEST_DISABLED_TARGETS="$tests_skip")
[ "${presets[0]}" = aarch64 ] ||
  configure+=(-DFETCHCONTENT_SOURCE_DIR_HIGHWAY="$(tools/highway_source.sh)")
slow='ContractShapes|OutlierChannelsOnBert|MatchReference|ForwardMatchesReference|BenchDecodeShapeRows'
slow+='|ForwardOnCompactKeysValues|ReferencePolicy|QuietWhenIdle|Soak|NoAllocation|DeathTest'
info() {  # QEMU_CPU: `edgeattn info` on that CPU model (one qemu run serves all its fields)
  QEMU_CPU=$1 qemu-aarch64 $build/tools/edgeattn info
}
field() {  # `edgeattn info` output, field name: that line's value
  sed -n "s/^$2: *//p" <<<"$1"
}
run() {  # QEMU_CPU, then ctest's selection
  local cpu=$1
  shift
  echo "== QEMU_CPU=$cpu: ctest $*"
  # From ctest's count of passed tests on: the failed ones, the time per label, the total.
  QEMU_CPU=$cpu ctest --test-dir $build -j2 "$@" --timeout 900 \
    --output-on-failure --no-tests=error | sed -n '/tests passed/,$p'
}
target_kernels() {  # QEMU_CPU, Highway target, shard: half of that target's kernel tests
  local log
  log=$(GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$3 QEMU_CPU=$1 qemu-aarch64 \
        $build/tests/simd_test --gtest_filter="*/$2" 2>&1) || { echo "$log"; return 1; }
  # A filter that selects nothing passes in gtest: a target missing on this model is an error.
  grep -q '^\[  PASSED  \] [1-9]' <<<"$log" || { echo "$log"; echo "no $2 tests on $1" >&2; return 1; }
  grep '^\[  PASSED  \]' <<<"$log" | sed "s/^/  $2, shard $3: /"
}
check_dispatch() {  # prints each CPU model's target and int8 kernels; fails without dispatch
  local chosen=() out
  out=$(info max)
  echo "== $preset: Highway $(field "$out" 'highway version')," \
    "compiled $(field "$out" 'highway compiled')"
  for cpu in "${all_cpus[@]}"; do
    out=$(info "$cpu")
    chosen+=("$(field "$out" 'highway chosen')")
    echo "== QEMU_CPU=$cpu: Highway target ${chosen[-1]}," \
      "int8 kernels $(field "$out" 'int8 kernels'), chosen $(field "$out" 'int8 chosen')"
    # The compact KV cache's kernels: the fp16 / bf16 arithmetic and smmla ones where the CPU
    # has the instructions.
    echo "   kv fp16 kernels $(field "$out" 'kv fp16 kernels'), kv bf16 kernels" \
      "$(field "$out" 'kv bf16 kernels'), kv int8 kernels $(field "$out" 'kv int8 kernels')"
  done
  [ "$preset" != aarch64-clang14 ] || return 0  # static dispatch: one target
  if [ "$(printf '%s\n' "${chosen[@]}" | sort -u | wc -l)" -lt 2 ]; then
    echo "test_arm.sh: $preset chose ${chosen[0]} on every CPU model: no run-time dispatch" >&2
    return 1
  fi
}
test_preset() {  # builds $preset, checks dispatch, runs the suite and the kernel runs
  build=build/$preset
  local began=$SECONDS
  cmake --preset $preset "${configure[@]}" >/dev/null
  cmake --build --preset $preset "${targets[@]}"
  echo "== $preset: built in $((SECONDS - began)) s"
  check_dispatch
  began=$SECONDS
  [ -z "$suite_cpu" ] || run $suite_cpu -E "$slow"
  for ((i = 0; i < ${#kernel_runs[@]}; i += 2)); do
    cpu=${kernel_runs[i]}
    case ${kernel_runs[i + 1]} in
      '') run "$cpu" -R "$kernels"; continue ;;
      ctest:*) run "$cpu" -R "${kernel_runs[i + 1]#ctest:}"; continue ;;
    esac
    echo "== QEMU_CPU=$cpu: simd_test, targets ${kernel_runs[i + 1]}"
    pids=()
    for target in ${kernel_runs[i + 1]}; do
      for shard in 0 1; do  # two processes per target: qemu runs one thread each
        target_kernels "$cpu" "$target" $shard &
        pids+=($!)
      done
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
  done
  echo "== $preset: tests ran in $((SECONDS - began)) s"
}
for preset in "${presets[@]}"; do test_preset; done
