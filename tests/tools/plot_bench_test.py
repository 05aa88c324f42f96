"""tools/plot_bench.py's table from several rounds: each row's fastest round, the int8 cosine from
whichever round measured it, and rows that measure different things kept apart."""
import contextlib
import importlib.util
import io
import sys
import unittest

spec = importlib.util.spec_from_file_location("plot_bench", sys.argv.pop(1))
plot_bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot_bench)


def row(mode, threads, median, cosine=None, shape="tiny", seq=64):
    return {"peer": "edgeattn", "shape": shape, "case": "forward", "seq": seq, "key_len": seq,
            "cache_len": 0, "d_model": 256, "heads": 4, "kv_heads": 4, "batch": 1,
            "cross": False, "mask": "none", "window": 0, "mode": mode, "int8_block": None,
            "kernel": "k", "attention_kernel": "a", "threads": threads, "median_ms": median,
            "cosine": cosine}


def table(rows):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        plot_bench.print_table(rows, None)
    return out.getvalue().splitlines()


class BestRoundsTest(unittest.TestCase):
    def test_fastest_round_per_row_in_either_order(self):
        first = [row("reference", 1, 14.0), row("int8", 1, 0.2, cosine=0.9998),
                 row("int8", 2, 0.12)]
        second = [row("int8", 1, 0.1), row("int8", 2, 0.15)]
        for rows in (first + second, second + first):
            lines = table(rows)
            self.assertEqual(len(lines), 3, lines)
            self.assertEqual(lines[2], "| tiny 64/256/4 | 14.0 | 0.100 | 0.120 (0.83x) | 0.99980 |")

    def test_other_shapes_and_modes_stay_apart(self):
        rows = [row("fp32", 1, 1.0), row("fp32", 1, 3.0, seq=128), row("int8", 1, 0.5),
                row("fp32", 1, 2.0)]
        kept = plot_bench.best_rounds(rows)
        self.assertEqual(sorted((r["mode"], r["seq"], r["median_ms"]) for r in kept),
                         [("fp32", 64, 1.0), ("fp32", 128, 3.0), ("int8", 64, 0.5)])

    def test_cases_of_one_shape_get_lines_of_their_own(self):
        rows = [dict(row("fp32", 1, ms, seq=1), case=case, key_len=1500, cross=True,
                     shape="whisper") for case, ms in (("xmem", 0.2), ("xproj", 6.0))]
        lines = table(rows)
        self.assertEqual(len(lines), 4, lines)
        self.assertEqual(lines[2], "| whisper xmem 1/1500 (256/4) | 0.200 | - |")
        self.assertEqual(lines[3], "| whisper xproj 1/1500 (256/4) | 6.00 | - |")

    def test_a_line_without_a_column_shows_a_dash(self):
        lines = table([row("fp32", 1, None), row("fp32", 2, 0.6), row("int8", 1, 0.5, seq=128)])
        self.assertEqual(lines[2:], ["| tiny 64/256/4 | - | 0.600 | - | - |",
                                     "| tiny 128/256/4 | - | - | 0.500 | - |"])

    def test_a_skipped_round_never_hides_a_measured_one(self):
        kept = plot_bench.best_rounds([row("fp32", 1, None), row("fp32", 1, 2.0),
                                       row("fp32", 1, None)])
        self.assertEqual([r["median_ms"] for r in kept], [2.0])


if __name__ == "__main__":
    unittest.main()
