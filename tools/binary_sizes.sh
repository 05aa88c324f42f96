#!/usr/bin/env bash
# The aarch64 Release sizes of each EDGEATTN_TARGETS choice (phone, server, all): libedgeattn.a
# and a minimal C consumer (tests/consumer/main.c, linked through pkg-config --static, stripped;
# Highway, oneTBB and the C++ runtime are shared libraries on Debian, so it is edgeattn's code);
# each consumer also runs under qemu. "phone" is built as docs/packaging.md's Android lines build
# it, without oneTBB; "server" and "all" with it. "all" reuses the library of the aarch64 stage
# (build/aarch64, the same Release options) when it is there and compiled every target (its
# tests may leave some out: EDGEATTN_TEST_DISABLED_TARGETS). A report, not a check:
# docs/packaging.md points here instead of quoting numbers.
# Arguments: the choices to build (default: phone server all).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh --arm >/dev/null
toolchain=cmake/toolchains/aarch64-linux-gnu.cmake
rows=()
choices=("$@")
[[ ${#choices[@]} -gt 0 ]] || choices=(phone server all)
for choice in "${choices[@]}"; do
  build=build/sizes-$choice prefix=build/sizes-$choice/prefix library=build/sizes-$choice
  if [[ $choice == all && -f build/aarch64/runtime/libedgeattn.a ]] &&
     ! grep -q '^EDGEATTN_TARGETS:.*=\(phone\|server\)' build/aarch64/CMakeCache.txt &&
     ! grep -q '^EDGEATTN_DISABLED_TARGETS:.*=.' build/aarch64/CMakeCache.txt; then
    library=build/aarch64
  else
    tbb=ON
    [[ $choice == phone ]] && tbb=OFF
    cmake -S . -B "$build" --toolchain "$toolchain" -DCMAKE_BUILD_TYPE=Release \
      -DEDGEATTN_TARGETS="$choice" -DEDGEATTN_WITH_TBB=$tbb -DEDGEATTN_BUILD_TESTS=OFF \
      -DEDGEATTN_BUILD_BENCH=OFF -DEDGEATTN_BUILD_CLI=OFF >/dev/null
    cmake --build "$build" -j2 >/dev/null
  fi
  mkdir -p "$build"
  cmake --install "$library" --prefix "$prefix" >/dev/null
  flags=$(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig:/usr/lib/aarch64-linux-gnu/pkgconfig" \
          pkg-config --cflags --libs --static edgeattn)
  # shellcheck disable=SC2086  # flags are separate words
  aarch64-linux-gnu-gcc -O2 tests/consumer/main.c -o "$build/consumer_c" $flags -lm
  aarch64-linux-gnu-strip "$build/consumer_c"
  QEMU_CPU=max qemu-aarch64 "$build/consumer_c" >/dev/null
  targets=$(aarch64-linux-gnu-nm -C "$prefix/lib/libedgeattn.a" 2>/dev/null |
            sed -n 's/.* edgeattn::simd::N_\([A-Z0-9_]*\)::.*/\1/p' | sort -u | tr '\n' ' ')
  rows+=("$(printf '| %-6s | %-32s | %9s | %9s |' "$choice" "$targets" \
            "$(stat -c %s "$prefix/lib/libedgeattn.a")" "$(stat -c %s "$build/consumer_c")")")
done
echo "aarch64 Release, $(aarch64-linux-gnu-gcc -dumpfullversion), bytes:"
printf '| %-6s | %-32s | %9s | %9s |\n' EDGEATTN_TARGETS "Highway targets compiled" \
  libedgeattn.a "C consumer, stripped"
printf '%s\n' "${rows[@]}"
