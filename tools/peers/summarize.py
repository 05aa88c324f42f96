#!/usr/bin/env python3
"""Reads the JSON lines of `edgeattn bench --json` and time_onnxruntime.js from one run and
prints, per shape, mode and thread count, edgeattn's median against ONNX Runtime's best variant
(with --markdown, as a Markdown table). A run of several rounds gives each side its best round.

    python3 tools/peers/summarize.py [--markdown] < lines.jsonl
"""
import json
import sys


def cosine(row):
    return "-" if row.get("cosine") is None else f"{row['cosine']:.6f}"


def main():
    rows = [json.loads(line) for line in sys.stdin if line.startswith("{")]
    ours, best = {}, {}
    for r in rows:
        if r["peer"] == "edgeattn" and r["mode"] != "reference":
            side = ours
        elif r["peer"].startswith("onnxruntime"):
            side = best
        else:
            continue
        key = (r["shape"], r["mode"], r["threads"])
        if key not in side or r["median_ms"] < side[key]["median_ms"]:
            side[key] = r
    markdown = "--markdown" in sys.argv[1:]
    if markdown:
        print("| shape | mode | threads | edgeattn ms | cosine | ONNX Runtime ms (best variant) "
              "| cosine | ORT / edgeattn |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    else:
        print(f"{'shape':8} {'mode':5} {'threads':>7} {'edgeattn ms':>12} {'cosine':>10} "
              f"{'onnxruntime ms':>15} {'cosine':>10}  {'ORT variant':18} {'ORT / edgeattn':>14}")
    for key, r in best.items():
        o = ours.get(key)
        if o is None:
            continue
        variant = r["peer"].split("/")[-1]
        ratio = r["median_ms"] / o["median_ms"]
        if markdown:
            print(f"| {key[0]} | {key[1]} | {key[2]} | {o['median_ms']:.3f} | {cosine(o)} | "
                  f"{r['median_ms']:.3f} ({variant}) | {cosine(r)} | {ratio:.2f}x |")
        else:
            print(f"{key[0]:8} {key[1]:5} {key[2]:7} {o['median_ms']:12.3f} {cosine(o):>10} "
                  f"{r['median_ms']:15.3f} {cosine(r):>10}  {variant:18} {ratio:13.2f}x")


if __name__ == "__main__":
    main()
