#!/usr/bin/python3
"""Plots the JSON lines of `edgeattn bench --json` (and of tools/bench_peers.sh) as PNG files.

    edgeattn bench --shape bert --seq 32:2048:x2 --reference never --json | \\
        tools/plot_bench.py seq -o docs/img/latency_vs_seq.png
    edgeattn bench --threads 1:2 --reference never --json | \\
        tools/plot_bench.py threads -o docs/img/threads_speedup.png
    tools/plot_bench.py peers build/peers/run.jsonl -o docs/img/vs_onnxruntime.png
    edgeattn bench --threads 1,2 --json | tools/plot_bench.py table

seq:     latency (median, and a band from the fastest call to p90) against the sequence length
         per precision and thread count, log-log, with an O(L^2) guide.
threads: speed-up over the fewest threads measured, per shape and precision, against ideal.
peers:   ONNX Runtime's time over edgeattn's per shape, precision, thread count and ONNX Runtime
         variant (above 1: edgeattn is faster), from one run of tools/bench_peers.sh.
table:   a Markdown table of the medians, one line per shape and columns per precision and thread
         count (speed-up over the fewest threads in parentheses), with the int8 cosine.
threads and table take each row's fastest round when the input holds several.
Each plot names the edgeattn version, the CPU, the date of its rows and the range of the system's
load average while they ran (above the number of cores: other processes shared the CPU). Reads the files given,
or standard input. Debian's python3-matplotlib (tools/install_deps.sh --plots), hence
/usr/bin/python3 rather than whichever python3 comes first on the PATH.
"""
import argparse
import json
import sys
from collections import defaultdict


def pyplot():
    """matplotlib's pyplot, for the plots only: the table needs no more than Python."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_bench.py: needs matplotlib: tools/install_deps.sh --plots installs "
                 "python3-matplotlib")
    return plt


def read_rows(paths):
    files = [open(p) for p in paths] if paths else [sys.stdin]
    rows = []
    for f in files:
        rows += [json.loads(line) for line in f if line.startswith("{")]
    if not rows:
        sys.exit("plot_bench.py: no JSON rows in the input")
    return rows


def timed(rows):
    """edgeattn's measured rows (the reference and skipped rows left out)."""
    return [r for r in rows if r["peer"] == "edgeattn" and r["mode"] != "reference"
            and r.get("median_ms") is not None]


# What makes two rows measure the same thing; rows that differ only in these are rounds.
ROW_KEY = ("peer", "shape", "case", "seq", "key_len", "cache_len", "d_model", "heads",
           "kv_heads", "batch", "cross", "mask", "window", "mode", "int8_block", "kernel",
           "attention_kernel", "threads")


# What only the first round measures (the float reference runs there).
ACCURACY = ("cosine", "max_abs_err")


def best_rounds(rows):
    """Each measured row's fastest round (lowest median), in the order rows first came; rounds
    run alternately on a shared machine, where another process only ever makes a row slower. The
    accuracy columns come from whichever round measured them (the same seeds give the same
    errors)."""
    best = {}
    for r in rows:
        key = tuple(r.get(k) for k in ROW_KEY)
        kept = best.get(key, {})
        faster = not kept or (r.get("median_ms") is not None and
                              (kept.get("median_ms") is None or r["median_ms"] < kept["median_ms"]))
        other = kept if faster else r
        merged = dict(r if faster else kept)
        for k in ACCURACY:
            if merged.get(k) is None:
                merged[k] = other.get(k)
        best[key] = merged
    return list(best.values())


def footnote(fig, rows, extra=""):
    ours = [r for r in rows if r["peer"] == "edgeattn"]
    versions = sorted({r.get("version", "?") for r in ours})
    cpus = sorted({r.get("cpu", "?") for r in ours})
    dates = sorted({r["time"][:10] for r in ours if r.get("time")})
    loads = [r["load_average"] for r in ours if r.get("load_average") is not None]
    load = f", load average {min(loads):.1f}-{max(loads):.1f}" if loads else ""
    text = (f"edgeattn {', '.join(versions)} on {'; '.join(cpus)}, "
            f"{' to '.join([dates[0], dates[-1]] if len(dates) > 1 else dates)}{load}{extra}")
    fig.text(0.01, 0.01, text, fontsize=7, color="0.35")


def shape_text(rows):
    """What the rows share: 'd 768, 12 heads, batch 1' and the mask."""
    keys = [("d_model", "d {}"), ("heads", "{} heads"), ("batch", "batch {}"), ("mask", "mask {}")]
    parts = []
    for key, fmt in keys:
        values = {r.get(key) for r in rows}
        if len(values) == 1 and None not in values:
            parts.append(fmt.format(values.pop()))
    return ", ".join(parts)


def plot_seq(rows, out):
    rows = timed(rows)
    series = defaultdict(list)
    for r in rows:
        series[(r["shape"], r["mode"], r["threads"])].append(r)
    fig, ax = pyplot().subplots(figsize=(7.5, 5))
    top = max(rows, key=lambda r: (r["seq"], r["median_ms"]))
    for (shape, mode, threads), points in sorted(series.items()):
        points.sort(key=lambda r: r["seq"])
        seqs = [r["seq"] for r in points]
        label = f"{mode}, {threads} thread{'s' if threads > 1 else ''}"
        if len({k[0] for k in series}) > 1:
            label = f"{shape} {label}"
        line, = ax.plot(seqs, [r["median_ms"] for r in points], "o-", label=label)
        if all(r.get("p90_ms") is not None and r.get("min_ms") is not None for r in points):
            ax.fill_between(seqs, [r["min_ms"] for r in points], [r["p90_ms"] for r in points],
                            color=line.get_color(), alpha=0.15, linewidth=0)
    # O(L^2) through the slowest point at the longest sequence.
    guide_l = sorted({r["seq"] for r in rows})
    ax.plot(guide_l, [top["median_ms"] * (l / top["seq"]) ** 2 for l in guide_l], "k--",
            linewidth=0.8, label="O(L²) guide")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length L (self-attention)")
    ax.set_ylabel("ms per forward call (median; band: fastest call to p90)")
    ax.set_title(f"edgeattn latency against sequence length ({shape_text(rows)})", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    footnote(fig, rows)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out, dpi=120)


def plot_threads(rows, out):
    rows = timed(best_rounds(rows))
    series = defaultdict(dict)
    for r in rows:
        # The table's line label: the cases of one shape (decode, beams; xmem, xproj) apart.
        series[(group_label(r), r["mode"])][r["threads"]] = r["median_ms"]
    fig, ax = pyplot().subplots(figsize=(10, 5.5))
    most = max(r["threads"] for r in rows)
    # A colour a line of the table, a marker and dash a precision.
    labels = sorted({label for label, _ in series})
    styles = {"fp32": "o-", "int8": "s--", "bf16": "^:"}
    for (label, mode), times in sorted(series.items()):
        threads = sorted(times)
        if len(threads) < 2:
            continue
        ax.plot(threads, [times[threads[0]] / times[t] for t in threads], styles.get(mode, "d-."),
                color=f"C{labels.index(label) % 10}", label=f"{label} {mode}")
    fewest = min(r["threads"] for r in rows)
    ax.plot([fewest, most], [1, most / fewest], "k--", linewidth=0.8, label="ideal")
    ax.set_xlabel("threads")
    ax.set_ylabel(f"speed-up over {fewest} thread{'s' if fewest > 1 else ''} (median times)")
    ax.set_xticks(sorted({r["threads"] for r in rows}))
    ax.set_title("edgeattn speed-up against threads", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    footnote(fig, rows)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out, dpi=120)


def plot_peers(rows, out):
    # Each side's best round (tools/bench_peers.sh runs several): a variant's fastest median over
    # edgeattn's fastest.
    rows = best_rounds(rows)
    ours = {(r["shape"], r["mode"], r["threads"]): r["median_ms"] for r in timed(rows)}
    theirs = defaultdict(dict)  # (mode) -> variant -> cell -> ratio
    versions = set()
    for r in rows:
        cell = (r["shape"], r["mode"], r["threads"])
        if not r["peer"].startswith("onnxruntime") or cell not in ours:
            continue
        peer, variant = r["peer"].split("/", 1)
        versions.add(peer.replace("onnxruntime-", ""))
        theirs[r["mode"]].setdefault(variant, {})[cell] = r["median_ms"] / ours[cell]
    if not theirs:
        sys.exit("plot_bench.py: no ONNX Runtime rows matching edgeattn rows (tools/bench_peers.sh)")
    modes = [m for m in ("fp32", "int8") if m in theirs]
    fig, axes = pyplot().subplots(1, len(modes), figsize=(11, 4.8), squeeze=False)
    shapes = list(dict.fromkeys(k[0] for k in ours))
    for ax, mode in zip(axes[0], modes):
        cells = [c for c in ours if c[1] == mode]
        cells.sort(key=lambda c: (shapes.index(c[0]), c[2]))
        variants = sorted(theirs[mode])
        width = 0.8 / len(variants)
        for i, variant in enumerate(variants):
            xs = [j + (i - (len(variants) - 1) / 2) * width for j in range(len(cells))]
            ax.bar(xs, [theirs[mode][variant].get(c, 0) for c in cells], width, label=variant)
        ax.axhline(1.0, color="k", linewidth=0.8)
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels([f"{c[0]}\n{c[2]} thr" for c in cells], fontsize=8)
        ax.set_ylabel("ONNX Runtime ms / edgeattn ms (above 1: edgeattn faster)", fontsize=8)
        ax.set_title(f"{mode}: each ONNX Runtime variant against edgeattn", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    footnote(fig, rows,
             f", ONNX Runtime {', '.join(sorted(versions))}, each side's best round's median")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(out, dpi=120)


def ms(x):
    """Three significant digits, trailing zeros kept: 0.150, 2.14, 58.7, 2857."""
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 1 \
        else f"{x:.3f}"


def group_label(r):
    """The table's first column: one label per case measured (xmem and xproj share a shape)."""
    width = f"({r['d_model']}/{r['heads']})"
    if r["case"] == "decode":
        window = f" window {r['window']}" if r.get("window") else ""
        return f"{r['shape']} cache {r['cache_len']}{window} {width}"
    if r["case"] == "forward":
        key = f"/{r['key_len']}" if r.get("cross") else ""
        return f"{r['shape']} {r['seq']}{key}/{r['d_model']}/{r['heads']}"
    cache = f" cache {r['cache_len']}" if r.get("cache_len") else ""
    batch = f" batch {r['batch']}" if r.get("batch", 1) > 1 else ""
    return f"{r['shape']} {r['case']} {r['seq']}/{r['key_len']}{cache}{batch} {width}"


def print_table(rows, _output):
    groups = {}
    columns = []
    for r in best_rounds(rows):
        if r["peer"] != "edgeattn":
            continue
        cells = groups.setdefault(group_label(r), {})
        column = "reference" if r["mode"] == "reference" else (r["mode"], r["threads"])
        if column not in columns:
            columns.append(column)
        cells[column] = r
    timed_columns = [c for c in columns if c != "reference"]
    titles = (["reference ms"] if "reference" in columns else []) + [
        f"{m} {t} thr ms" for m, t in timed_columns] + ["int8 cosine"]
    print("| shape (L/d/h) | " + " | ".join(titles) + " |")
    print("| --- |" + " ---: |" * len(titles))
    for label, cells in groups.items():
        line = [label]
        if "reference" in columns:
            ref = cells.get("reference")
            line.append("skipped" if ref is None or ref.get("median_ms") is None
                        else ms(ref["median_ms"]))
        for mode, threads in timed_columns:
            r = cells.get((mode, threads))
            if r is None or r.get("median_ms") is None:
                line.append("-")
                continue
            fewest = next(cells[(m, t)] for m, t in timed_columns if m == mode and (m, t) in cells
                          and cells[(m, t)].get("median_ms") is not None)
            text = ms(r["median_ms"])
            if r is not fewest:
                text += f" ({fewest['median_ms'] / r['median_ms']:.2f}x)"
            line.append(text)
        cosines = [r["cosine"] for c, r in cells.items() if c != "reference"
                   and r["mode"] == "int8" and r.get("cosine") is not None]
        line.append(f"{cosines[0]:.5f}" if cosines else "-")
        print("| " + " | ".join(line) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("plot", choices=["seq", "threads", "peers", "table"])
    parser.add_argument("files", nargs="*", help="JSON lines (default: standard input)")
    parser.add_argument("-o", "--output", help="PNG file to write (not for table)")
    args = parser.parse_args()
    if args.plot != "table" and not args.output:
        parser.error("-o/--output: expected the PNG file to write")
    rows = read_rows(args.files)
    plots = {"seq": plot_seq, "threads": plot_threads, "peers": plot_peers, "table": print_table}
    plots[args.plot](rows, args.output)


if __name__ == "__main__":
    main()
