#!/usr/bin/env bash
# The figures of README.md and docs/performance.md, one command each, from the release build:
#
#   tools/bench_figures.sh contract  every contract shape at 1 and 2 threads: the Markdown table
#                                    and docs/img/threads_speedup.png
#   tools/bench_figures.sh seq       bert's width (d 768, 12 heads) at L = 32 ... 4096:
#                                    docs/img/latency_vs_seq.png
#   tools/bench_figures.sh decode    one decode step against caches of 128 ... 4096: the table
#   tools/bench_figures.sh peers     tools/bench_peers.sh (ONNX Runtime in the same run): the
#                                    table and docs/img/vs_onnxruntime.png
#   tools/bench_figures.sh all       all four
#
# The JSON lines stay in build/bench/ (peers: build/peers/run.jsonl). Run on a quiet machine:
# other processes show up as slower and more spread rows.
set -euo pipefail
cd "$(dirname "$0")/.."
edgeattn=build/release/tools/edgeattn
[ -x "$edgeattn" ] || { echo "build the release preset first: $edgeattn is missing" >&2; exit 1; }
tools/install_deps.sh --plots
mkdir -p build/bench docs/img
plot=(/usr/bin/python3 tools/plot_bench.py)

# Three rounds, each row's fastest round in the table and plot: on a shared machine one round of a
# row can run 1.3x slower. The float reference (slow, and its errors are the same in every round)
# runs in the first only.
figure_contract() {
  local reference=always
  : >build/bench/contract.jsonl
  for round in 1 2 3; do
    echo "contract shapes, round $round of 3" >&2
    "$edgeattn" bench --threads 1,2 --min-time 2 --reference "$reference" --json \
      >>build/bench/contract.jsonl
    reference=never
  done
  "${plot[@]}" table build/bench/contract.jsonl
  "${plot[@]}" threads build/bench/contract.jsonl -o docs/img/threads_speedup.png
}
figure_seq() {
  "$edgeattn" bench --shape bert --seq 32:4096:x2 --threads 1,2 --min-calls 10 \
    --reference never --json | tee build/bench/seq.jsonl |
    "${plot[@]}" seq -o docs/img/latency_vs_seq.png
}
figure_decode() {
  "$edgeattn" bench --shape decode --decode 128:4096:x2 --threads 1,2 --json |
    tee build/bench/decode.jsonl | "${plot[@]}" table
}
figure_peers() {
  tools/bench_peers.sh 1,2 1 5 >/dev/null
  /usr/bin/python3 tools/peers/summarize.py --markdown <build/peers/run.jsonl
  "${plot[@]}" peers build/peers/run.jsonl -o docs/img/vs_onnxruntime.png
}

case "${1:-}" in
  contract | seq | decode | peers) "figure_$1" ;;
  all) figure_contract && figure_seq && figure_decode && figure_peers ;;
  *) echo "usage: tools/bench_figures.sh contract|seq|decode|peers|all" >&2; exit 1 ;;
esac
