#!/usr/bin/env bash
# Cross-builds edgeattn for aarch64 and runs the test suite under qemu-aarch64 once per CPU
# model, so that every ARM kernel path runs: NEON without and with the dot product, SVE, SVE2,
# and the fixed-width SVE2_128 and SVE_256 targets. Prints the Highway target and the int8 path
# each run used; fails if any run fails. Tests on the full contract shapes are left to the
# native run (qemu is 150-1700x slower), as do the soak and allocation-counting runs; every
# kernel test still runs on every ARM target.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh --arm
cmake --preset aarch64 >/dev/null && cmake --build --preset aarch64
slow='ContractShapes|OutlierChannelsOnBert|QuietWhenIdle|Soak|NoAllocation'
cpus=(cortex-a53 neoverse-n1 a64fx max max,sve-default-vector-length=16
      max,sve-default-vector-length=32)
for cpu in "${cpus[@]}"; do
  info=$(QEMU_CPU=$cpu qemu-aarch64 build/aarch64/tools/edgeattn info)
  target=$(sed -n 's/^highway chosen: *//p' <<<"$info")
  path=$(sed -n 's/^int8 path: *//p' <<<"$info")
  echo "== QEMU_CPU=$cpu: Highway target $target, int8 path $path"
  QEMU_CPU=$cpu ctest --test-dir build/aarch64 -j2 -E "$slow" --timeout 900 \
    --output-on-failure --no-tests=error | tail -n 3
done
