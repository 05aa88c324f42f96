#!/usr/bin/env bash
# edgeattn against ONNX Runtime (PEERS.md's peer to beat) in the same run, on this machine:
# installs Node.js and NumPy from Debian and onnxruntime-node from npm (its CPU library is
# inside the package; install scripts are skipped, they only fetch GPU builds), writes ONNX
# models of the contract shapes (tools/peers/make_onnx_models.py: fp32 as plain operators, the
# fused Attention and MultiHeadAttention; int8 as DynamicQuantizeMatMul projections around the
# plain core or MultiHeadAttention, and QAttention), then for each shape times edgeattn and every
# ONNX Runtime variant back to back, ROUNDS times over all shapes (a busy moment then spoils one
# round, not a cell), and prints the best round of edgeattn against the best round of ONNX
# Runtime's best variant. The JSON lines of the run stay in build/peers/run.jsonl
# (tools/plot_bench.py peers plots them).
#
#   tools/bench_peers.sh [THREADS=1,2] [MIN_TIME=1] [ROUNDS=3]
# Needs the release build (cmake --preset release && cmake --build --preset release).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-1,2}
min_time=${2:-1}
rounds=${3:-3}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2; }
work=build/peers
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
/usr/bin/python3 -c "import numpy" 2>/dev/null || missing+=(python3-numpy)
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}"
fi
mkdir -p "$work"
[ -d "$work/node_modules/onnxruntime-node" ] ||
  npm install --prefix "$work" --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0
# Written again when the generator changed since (new variants).
[ "$work/models.json" -nt tools/peers/make_onnx_models.py ] ||
  /usr/bin/python3 tools/peers/make_onnx_models.py "$work"
edgeattn=build/release/tools/edgeattn
[ -x "$edgeattn" ] || { echo "build the release preset first: $edgeattn is missing" >&2; exit 1; }
lines="$work/run.jsonl"
: >"$lines"
for ((round = 0; round < rounds; ++round)); do
  for shape in tiny minilm bert whisper; do
    "$edgeattn" bench --shape "$shape" --threads "$threads" --json --min-time "$min_time" \
      --reference always | grep -v '"mode":"reference"' | tee -a "$lines"
    NODE_PATH="$work/node_modules" node tools/peers/time_onnxruntime.js "$work" "$shape" \
      "$threads" "$min_time" | tee -a "$lines"
  done
done
echo
/usr/bin/python3 tools/peers/summarize.py <"$lines"
