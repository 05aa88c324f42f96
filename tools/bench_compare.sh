#!/usr/bin/env bash
# Compares the speed of this checkout's release build against another commit's, on a machine
# too noisy for single runs: both builds' benchmark binaries run in alternation, ROUNDS times,
# and each benchmark's best time per build is printed with the ratio base / current, then the
# median and range of the rounds' own ratios (each round runs both builds back to back).
#
#   tools/bench_compare.sh BASE_REF [BINARY=forward_bench] [FILTER=.] [ROUNDS=5]
# e.g. tools/bench_compare.sh HEAD~1 kernels_bench 'GemmI8|Attention' 6
# BINARY is forward_bench or kernels_bench. The base is built in build/compare/<commit> (a git
# worktree, kept for the next comparison); this checkout needs its release build.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n 2,9p "$0" >&2; exit 2; }
base_ref=$1
binary=${2:-forward_bench}
filter=${3:-.}
rounds=${4:-5}
case "$binary" in
  forward_bench | kernels_bench) ;;
  *) echo "BINARY must be forward_bench or kernels_bench, got '$binary'" >&2; exit 2 ;;
esac
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2; }
commit=$(git rev-parse --verify "$base_ref^{commit}")
current=build/release/bench/$binary
[ -x "$current" ] || { echo "build the release preset first: $current is missing" >&2; exit 1; }
base_dir=build/compare/$commit
if [ ! -d "$base_dir" ]; then
  git worktree add --detach "$base_dir" "$commit" >/dev/null
fi
(cd "$base_dir" && cmake --preset release >/dev/null &&
  cmake --build --preset release -j"$(nproc)" --target "$binary" >/dev/null)
base=$base_dir/build/release/bench/$binary
for ((i = 0; i < rounds; ++i)); do
  for side in base current; do
    bin=$base
    [ "$side" = current ] && bin=$current
    # Google Benchmark's console line: name, time, unit, ... (a benchmark that skipped itself,
    # "ERROR OCCURRED: ...", has no time and is left out)
    "$bin" --benchmark_filter="$filter" 2>/dev/null |
      awk -v side="$side" '/^BM_/ && $2 ~ /^[0-9.e+-]+$/ {print side, $1, $2, $3}'
  done
done | awk -v rounds="$rounds" -v base_name="$(git rev-parse --short "$commit")" '
  { key = $2; unit[key] = $4; if (!(key in order)) { order[key] = ++n; names[n] = key }
    if (!((($1) SUBSEP key) in best) || $3 < best[$1, key]) best[$1, key] = $3
    t[$1, key, ++runs[$1, key]] = $3 }
  # The median of the per-round ratios base / current of benchmark k (over the rounds both sides
  # completed), their smallest and largest in lo and hi: a round runs both builds back to back,
  # so its ratio cancels the slow drifts of a shared machine that best times can straddle.
  function paired_median(k,    r, m, i, x, ratio) {
    m = runs["base", k] < runs["current", k] ? runs["base", k] : runs["current", k]
    for (r = 1; r <= m; ++r) {
      x = t["base", k, r] / t["current", k, r]
      for (i = r - 1; i >= 1 && ratio[i] > x; --i) ratio[i + 1] = ratio[i]
      ratio[i + 1] = x
    }
    lo = ratio[1]; hi = ratio[m]
    return m % 2 ? ratio[(m + 1) / 2] : (ratio[m / 2] + ratio[m / 2 + 1]) / 2
  }
  END {
    printf "%d alternating rounds; base = %s, current = this checkout\n", rounds, base_name
    printf "%-60s %12s %12s %6s %8s %8s %15s\n", "benchmark", "best base", "best cur", "unit",
           "base/cur", "median", "range"
    for (i = 1; i <= n; ++i) {
      k = names[i]
      if (!(("base", k) in best) || !(("current", k) in best)) {  # a benchmark one side lacks
        printf "%-60s %12s %12s %6s\n", k, (("base", k) in best) ? best["base", k] : "-",
               (("current", k) in best) ? best["current", k] : "-", unit[k]
        continue
      }
      median = paired_median(k)
      printf "%-60s %12.4g %12.4g %6s %7.2fx %7.2fx %7.2f-%.2fx\n", k, best["base", k],
             best["current", k], unit[k], best["base", k] / best["current", k], median, lo, hi
    }
  }'
