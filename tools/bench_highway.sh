#!/usr/bin/env bash
# What a newer Highway buys: `edgeattn bench` from the build against Debian's Highway 1.0.3
# (preset release or test, which share a tree) and from the build against Highway 1.4.0 (preset hwy14), in
# alternation, ROUNDS times; prints per shape and precision each build's best median, the ratio
# 1.0.3 / 1.4 (above 1: 1.4 is faster) and both builds' accuracy against the float reference.
#
#   tools/bench_highway.sh [ROUNDS=3] [edgeattn bench options, default --shape all]
# e.g. tools/bench_highway.sh 5 --shape bert --threads 1
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2; }
shift $(($# > 0 ? 1 : 0))
[ $# -gt 0 ] || set -- --shape all
old=build/release/tools/edgeattn
new=build/hwy14/tools/edgeattn
[ -x "$old" ] && [ -x "$new" ] || {
  echo "build presets test (or release) and hwy14 first" >&2
  exit 1
}
out=build/bench/highway
mkdir -p "$out"
rm -f "$out"/*.jsonl
for ((i = 0; i < rounds; ++i)); do
  for bin in "$old" "$new"; do
    "$bin" bench --json "$@" >>"$out/$(basename "$(dirname "$(dirname "$bin")")").jsonl"
  done
done
python3 - "$out" <<'PY'
import json, pathlib, sys
rows = {}
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.jsonl")):
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r["mode"] == "reference":
            continue
        key = (r["shape"], r["case"], r["mode"], r["threads"])
        side = rows.setdefault(key, {}).setdefault(r["highway_version"], {})
        side["target"] = r["highway_target"]
        side["ms"] = min(side.get("ms", float("inf")), r["median_ms"])
        if r["cosine"] is not None:
            side["cos"] = r["cosine"]
            side["err"] = r["max_abs_err"]
versions = sorted({v for sides in rows.values() for v in sides})
if len(versions) != 2:
    sys.exit(f"expected rows from two Highway versions, got {versions}")
old, new = versions
print(f"| shape | precision | threads | {old} ms ({rows[next(iter(rows))][old]['target']}) "
      f"| {new} ms ({rows[next(iter(rows))][new]['target']}) | {old} / {new} "
      f"| max abs err {old} / {new} | cosine {old} / {new} |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for (shape, case, mode, threads), s in rows.items():
    a, b = s[old], s[new]
    acc = lambda f, k: f"{a[k]:{f}} / {b[k]:{f}}" if k in a and k in b else "-"
    print(f"| {shape} | {mode} | {threads} | {a['ms']:.3g} | {b['ms']:.3g} | "
          f"{a['ms'] / b['ms']:.2f}x | {acc('.2g', 'err')} | {acc('.6f', 'cos')} |")
PY
