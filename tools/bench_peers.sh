#!/usr/bin/env bash
# edgeattn against ONNX Runtime (PEERS.md's peer to beat) in the same run, on this machine:
# installs Node.js and NumPy from Debian and onnxruntime-node from npm (its CPU library is
# inside the package; install scripts are skipped, they only fetch GPU builds), writes ONNX
# models of the contract shapes (tools/peers/make_onnx_models.py), then for each shape times
# edgeattn and every ONNX Runtime variant back to back and prints a comparison.
#
#   tools/bench_peers.sh [THREADS=1,2] [MIN_TIME=1]
# Needs the release build (cmake --preset release && cmake --build --preset release).
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-1,2}
min_time=${2:-1}
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
[ -f "$work/models.json" ] || /usr/bin/python3 tools/peers/make_onnx_models.py "$work"
edgeattn=build/release/tools/edgeattn
[ -x "$edgeattn" ] || { echo "build the release preset first: $edgeattn is missing" >&2; exit 1; }
lines="$work/run.jsonl"
: >"$lines"
for shape in tiny minilm bert whisper; do
  "$edgeattn" bench --shape "$shape" --threads "$threads" --json --min-time "$min_time" |
    grep -v '"reference"' | tee -a "$lines"
  NODE_PATH="$work/node_modules" node tools/peers/time_onnxruntime.js "$work" "$shape" \
    "$threads" "$min_time" | tee -a "$lines"
done
echo
/usr/bin/python3 tools/peers/summarize.py <"$lines"
