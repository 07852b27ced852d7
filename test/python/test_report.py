"""bench/report.py, the half of the benchmark that judges and reports (no
GPU, no PyTorch): the acceptance verdicts against the performance targets,
the linearity in T, the extra memory, `rkc tune`'s run, and BENCHMARKS.md
with its two plots, from rows of made-up measurements.

  python3 test/python/test_report.py WORK_DIR
"""
import json
import os
import sys
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import report  # noqa: E402


def timing(ms):
    return report.Timing([ms * 0.98, ms, ms * 1.02])


def row(section, spec, shape, rkc=None, fla=None, status="ok", label="ref",
        nbytes=None):
    return {"section": section, "spec": spec, "shape": shape, "status": status,
            "label": label, "note": "", "err_o": 1e-3, "err_s": 1e-3,
            "rkc": timing(rkc) if rkc else None,
            "fla": timing(fla) if fla else None, "bytes": nbytes,
            "mem_rkc": (0, 0), "mem_fla": (2 ** 30, 0)}


SHAPES = [(1, 8192, 32, 128), (4, 4096, 16, 128), (1, 32768, 16, 128)]


def verdicts(items):
    return {item: verdict for item, _, _, verdict in items}


def db_line(schedule, status, median=None, default=False):
    """A line of `rkc tune`'s database, as it writes one."""
    d = {"spec": "eda", "bucket": "bh=32,t=8192", "schedule": schedule,
         "default": default, "status": status}
    if median is not None:
        d.update(median_ms=median, p20_ms=median * 0.99, p80_ms=median * 1.01,
                 reps=20)
    return json.dumps(d)


DB = "\n".join([
    db_line({"chunk_size": 16, "value_tile": 32}, "ok", 2.0, default=True),
    db_line({"chunk_size": 16, "value_tile": 16}, "ok", 1.8),
    db_line({"chunk_size": 32, "value_tile": 32}, "ok", 3.0),
    db_line({"chunk_size": 8, "value_tile": 32}, "failed"),
    db_line({"chunk_size": 64, "value_tile": 32}, "pruned")]) + "\n"
TUNE_ITEM = "rkc tune eda at 1,8192,32,128: wall time; winner over the default"


def tune_row(wall_s=300.0, db=DB, status="ok"):
    r = row("tune", "eda", report.TUNE_SHAPE, status=status, label="rkc tune")
    r["mem_rkc"] = r["mem_fla"] = None
    if status == "ok":
        r["tune"] = dict(report.tune_summary(db), wall_s=wall_s,
                         db="bench/tuning/eda.jsonl",
                         winners="bench/tuning/eda.winners.md")
    return r


class Acceptance(unittest.TestCase):
    def test_speedups_pass_only_when_every_shape_meets_the_target(self):
        prefill = [row("prefill", "kda", s, rkc=0.5, fla=1.0) for s in SHAPES]
        prefill += [row("prefill", "gdn", s, rkc=1.0, fla=1.0) for s in SHAPES]
        v = verdicts(report.acceptance(["kda", "gdn"], prefill, [], [], 4000))
        self.assertEqual(v["kda prefill faster than fla ref"], "pass")   # 2.0× ≥ 1.5×
        self.assertEqual(v["gdn prefill faster than fla ref"], "FAIL")   # 1.0× < 1.3×

    def test_a_row_not_measured_is_not_a_pass(self):
        prefill = [row("prefill", "kda", SHAPES[0], rkc=0.5, fla=1.0),
                   row("prefill", "kda", SHAPES[1], status="not run: past --time-limit")]
        v = verdicts(report.acceptance(["kda"], prefill, [], [], 4000))
        self.assertEqual(v["kda prefill faster than fla ref"], "n/a")

    def test_time_relative_to_rkc_kda(self):
        prefill = [row("prefill", "kda", SHAPES[0], rkc=1.0, fla=2.0),
                   row("prefill", "eda", SHAPES[0], rkc=1.5, fla=8.0, label="dplr"),
                   row("prefill", "qed", SHAPES[0], rkc=1.5, fla=8.0, label="dplr")]
        v = verdicts(report.acceptance(["kda", "eda", "qed"], prefill, [], [], 4000))
        self.assertEqual(v["eda prefill time over RKC's kda"], "pass")   # 1.5 ≤ 1.6
        self.assertEqual(v["qed prefill time over RKC's kda"], "FAIL")   # 1.5 > 1.3

    def test_decode_share_of_copy_bandwidth(self):
        # 4000 GB/s copy: 3.6e9 bytes in 1 ms is 3600 GB/s, 90%.
        decode = [row("decode", "kda", (64, 32, 128), rkc=1.0, nbytes=3.6e9),
                  row("decode", "gdn", (64, 32, 128), rkc=1.0, nbytes=2.0e9)]
        v = verdicts(report.acceptance(["kda", "gdn"], [], [], decode, 4000))
        self.assertEqual(v["kda decode, share of copy bandwidth"], "pass")
        self.assertEqual(v["gdn decode, share of copy bandwidth"], "FAIL")
        self.assertEqual(v["decode, every spec, share of copy bandwidth"], "FAIL")

    def test_linear_in_t(self):
        linear = [row("T sweep", "kda", (1, t, 16, 128), rkc=t / 1000)
                  for t in report.SWEEP_T]
        v = verdicts(report.acceptance(["kda"], [], linear, [], 4000))
        self.assertEqual(v["kda linear in T (RKC): each step over linear "
                           "extrapolation"], "pass")
        bent = [dict(r) for r in linear]
        bent[3] = row("T sweep", "kda", bent[3]["shape"],
                      rkc=1.3 * bent[3]["shape"][1] / 1000)   # one step 1.3×
        v = verdicts(report.acceptance(["kda"], [], bent, [], 4000))
        self.assertEqual(v["kda linear in T (RKC): each step over linear "
                           "extrapolation"], "FAIL")
        ratios = report.step_ratios(bent)
        self.assertAlmostEqual(max(x for _, _, x in ratios), 1.3)


    def test_extra_memory_against_fla(self):
        prefill = [row("prefill", "kda", s, rkc=0.5, fla=1.0) for s in SHAPES]
        item = "extra device memory no larger than fla's (every row with an fla side)"
        # A decode row with no fla kernel beside it (eda) is not compared.
        decode = [dict(row("decode", "eda", (64, 32, 128), rkc=0.1), mem_fla=None)]
        self.assertEqual(verdicts(report.acceptance(["kda", "eda"], prefill, [], decode,
                                                    4000))[item], "pass")
        # A row that FAILED its check has no memory: the verdict stays open.
        failed = dict(row("prefill", "kda", SHAPES[0], status="FAILED"),
                      mem_rkc=None, mem_fla=None)
        self.assertEqual(verdicts(report.acceptance(["kda"], prefill + [failed], [], [],
                                                    4000))[item], "n/a")
        # Outside torch's allocator counts too: 1.5 GiB against fla's 1 GiB.
        prefill[1]["mem_rkc"] = (2 ** 29, 2 ** 30)
        items = {i: (m, v) for i, _, m, v in report.acceptance(
            ["kda"], prefill, [], [], 4000)}
        self.assertEqual(items[item][1], "FAIL")
        self.assertIn("1 of 3 rows over: kda 4,4096,16,128 1536.0 > 1024.0 MiB",
                      items[item][0])
        # A row that was not measured leaves the verdict open.
        prefill[1]["mem_rkc"] = None
        self.assertEqual(verdicts(report.acceptance(["kda"], prefill, [], [], 4000))[item],
                         "n/a")


class Tune(unittest.TestCase):
    def test_the_database_says_default_winner_and_counts(self):
        t = report.tune_summary(DB)
        self.assertEqual(t["counts"], {"ok": 3, "failed": 1, "pruned": 1})
        self.assertEqual(t["default"]["schedule"], {"chunk_size": 16, "value_tile": 32})
        self.assertEqual(t["winner"]["schedule"], {"chunk_size": 16, "value_tile": 16})
        self.assertAlmostEqual(t["winner"]["median"], 1.8)
        self.assertEqual(report.schedule_text(t["winner"]["schedule"]),
                         "chunk-size 16, value-tile 16")

    def test_a_database_without_a_passing_default_is_refused(self):
        only_failed = db_line({"chunk_size": 16}, "failed", default=True) + "\n"
        with self.assertRaisesRegex(ValueError, "no default schedule that passed"):
            report.tune_summary(only_failed)
        with self.assertRaisesRegex(ValueError, "line 2: "):
            report.tune_summary(DB.splitlines()[0] + "\n{not json\n")

    def test_verdicts(self):
        self.assertEqual(verdicts(report.acceptance(["eda"], [], [], [], 4000,
                                                    [tune_row()]))[TUNE_ITEM], "pass")
        # Past 15 minutes, or a winner slower than the default, fails.
        self.assertEqual(verdicts(report.acceptance(["eda"], [], [], [], 4000,
                                                    [tune_row(wall_s=901)]))[TUNE_ITEM],
                         "FAIL")
        # (A winner slower than the default cannot come out of tune_summary,
        # the default being a candidate; the verdict still says FAIL.)
        slow = tune_row()
        slow["tune"]["winner"] = dict(slow["tune"]["default"], median=2.5)
        self.assertEqual(verdicts(report.acceptance(["eda"], [], [], [], 4000,
                                                    [slow]))[TUNE_ITEM], "FAIL")
        self.assertEqual(verdicts(report.acceptance(
            ["eda"], [], [], [], 4000,
            [tune_row(status="not run: past --time-limit")]))[TUNE_ITEM], "n/a")
        self.assertEqual(verdicts(report.acceptance(
            ["eda"], [], [], [], 4000,
            [tune_row(status="FAILED (no default schedule that passed)")]))[TUNE_ITEM],
            "FAIL")

    def test_the_row_survives_the_round_trip_and_is_reported(self):
        identity = {"gpu": "a test GPU"}
        _, rows = report.rows_from_json(report.rows_json(identity, [tune_row()]))
        r = rows[0]
        self.assertEqual(r["shape"], report.TUNE_SHAPE)
        self.assertAlmostEqual(r["tune"]["winner"]["median"], 1.8)
        self.assertEqual(report.resumable(identity, identity, rows),
                         {("tune", "eda", report.TUNE_SHAPE): r})
        work = (sys.argv[1] if len(sys.argv) > 1 else "/tmp/rkc-report-test") + "-tune"
        os.makedirs(work, exist_ok=True)
        text = report.write_report(
            os.path.join(work, "BENCHMARKS.md"), os.path.join(work, "plots"), None,
            [("GPU", "a test GPU")], 4000.0, ["eda"], [], [], [], rows)
        self.assertIn("## Tuning (`rkc tune`)", text)
        self.assertIn("| eda | 1,8192,32,128 | 300 | 3 / 1 / 1 | chunk-size 16, "
                      "value-tile 32: 2.000 | chunk-size 16, value-tile 16: 1.800 "
                      "(1.782–1.818) | 1.11× | ok |", text)
        self.assertIn("| %s | ≤ 15 min; ≥ 1.00× | 300 s; 1.11× (chunk-size 16, "
                      "value-tile 16) | pass |" % TUNE_ITEM, text)
        self.assertIn("`bench/tuning/eda.jsonl`", text)


class Resume(unittest.TestCase):
    IDENTITY = {"gpu": "a test GPU", "rkc_commit": "abc1234",
                "fla_commit": "bc3b101d", "compile_options": ""}

    def rows(self):
        return [dict(row("prefill", "kda", SHAPES[0], rkc=0.5, fla=1.0,
                         nbytes=4e8), copy_gbs=4100.0),
                row("prefill", "gdn", SHAPES[0], status="FAILED"),
                row("decode", "kda", (64, 32, 128), status="error: boom"),
                row("T sweep", "eda", (1, 2048, 16, 128),
                    status="not run: past --time-limit")]

    def test_rows_survive_the_round_trip(self):
        identity, rows = report.rows_from_json(
            report.rows_json(self.IDENTITY, self.rows()))
        self.assertEqual(identity, self.IDENTITY)
        first = rows[0]
        self.assertEqual(first["shape"], SHAPES[0])   # a tuple again
        self.assertEqual(first["mem_fla"], (2 ** 30, 0))
        self.assertAlmostEqual(first["rkc"].median, 0.5)
        self.assertAlmostEqual(first["fla"].p80, timing(1.0).p80)
        self.assertEqual(first["copy_gbs"], 4100.0)
        self.assertIsNone(rows[1]["rkc"])

    def test_only_measured_rows_are_taken(self):
        _, rows = report.rows_from_json(report.rows_json(self.IDENTITY, self.rows()))
        taken = report.resumable(self.IDENTITY, self.IDENTITY, rows)
        self.assertEqual(sorted(taken), [("prefill", "gdn", SHAPES[0]),
                                         ("prefill", "kda", SHAPES[0])])

    def test_another_run_is_refused(self):
        other = dict(self.IDENTITY, rkc_commit="def5678")
        with self.assertRaisesRegex(ValueError, "rkc_commit 'def5678', this run 'abc1234'"):
            report.resumable(self.IDENTITY, other, [])
        with self.assertRaises(ValueError):
            report.rows_from_json("")
        # A malformed line other than the last is named; the last, cut short
        # by a kill, is left out with a warning.
        text = report.rows_json(self.IDENTITY, self.rows())
        lines = text.splitlines()
        broken = "\n".join([lines[0], lines[1][:-5]] + lines[2:])
        with self.assertRaisesRegex(ValueError, "line 2: "):
            report.rows_from_json(broken)
        warnings = []
        _, rows = report.rows_from_json("\n".join(lines[:-1] + [lines[-1][:-5]]),
                                        warnings.append)
        self.assertEqual(len(rows), len(lines) - 2)
        self.assertEqual(len(warnings), 1)
        self.assertIn("line %d, the last, left out" % len(lines), warnings[0])

    def test_a_resumed_row_keeps_its_own_copy_bandwidth(self):
        # 3.6e9 bytes in 1 ms: 90% of its run's 4000 GB/s, though this run
        # measured 5000.
        decode = [dict(row("decode", "kda", (64, 32, 128), rkc=1.0, nbytes=3.6e9),
                       copy_gbs=4000.0, resumed=True)]
        v = verdicts(report.acceptance(["kda"], [], [], decode, 5000))
        self.assertEqual(v["kda decode, share of copy bandwidth"], "pass")
        work = (sys.argv[1] if len(sys.argv) > 1 else "/tmp/rkc-report-test") + "-resume"
        os.makedirs(work, exist_ok=True)
        text = report.write_report(
            os.path.join(work, "BENCHMARKS.md"), os.path.join(work, "plots"), None,
            [("GPU", "a test GPU")], 5000.0, ["kda"], [], [], decode)
        self.assertIn("| rows of an earlier run | 1, marked", text)
        self.assertIn("copy bandwidth 4000 GB/s there", text)
        self.assertIn("| 90% |", text)
        self.assertIn("ok (resumed)", text)

    def test_planned_rows_in_report_order(self):
        planned = report.planned_rows(["kda", "gdn"], ["prefill", "decode", "sweep"],
                                      SHAPES[:1], [(64, 32, 128)], [2048, 4096])
        self.assertEqual(planned, [
            ("kda", "prefill", SHAPES[0]), ("gdn", "prefill", SHAPES[0]),
            ("kda", "decode", (64, 32, 128)), ("gdn", "decode", (64, 32, 128)),
            ("kda", "T sweep", (1, 2048, 16, 128)),
            ("kda", "T sweep", (1, 4096, 16, 128))])
        self.assertEqual(report.planned_rows(["gdn"], ["sweep"], [], [], [2048]), [])
        self.assertEqual(report.planned_rows(["kda", "eda"], ["tune", "prefill"],
                                             SHAPES[:1], [], []),
                         [("kda", "prefill", SHAPES[0]), ("eda", "prefill", SHAPES[0]),
                          ("eda", "tune", report.TUNE_SHAPE)])
        self.assertEqual(report.planned_rows(["kda"], ["tune"], [], [], []), [])


class Report(unittest.TestCase):
    def test_writes_the_tables_and_two_well_formed_plots(self):
        work = sys.argv[1] if len(sys.argv) > 1 else "/tmp/rkc-report-test"
        os.makedirs(work, exist_ok=True)
        prefill = [row("prefill", "kda", s, rkc=0.5, fla=1.0, nbytes=4e8)
                   for s in SHAPES]
        prefill.append(row("prefill", "gdn", SHAPES[0], status="FAILED"))
        sweep = [row("T sweep", "kda", (1, t, 16, 128), rkc=t / 1000,
                     fla=t / 500) for t in report.SWEEP_T]
        decode = [row("decode", "kda", (64, 32, 128), rkc=0.1, fla=0.08,
                      nbytes=3e8)]
        out = os.path.join(work, "BENCHMARKS.md")
        text = report.write_report(
            out, os.path.join(work, "bench", "plots"), None,
            [("GPU", "a test GPU")], 4000.0, ["kda", "gdn"], prefill, sweep,
            decode)
        with open(out) as f:
            self.assertEqual(f.read(), text)
        self.assertIn("## Acceptance (the performance targets)", text)
        self.assertIn("| kda | 1,8192,32,128 | ref | 0.500 (", text)
        self.assertIn("| gdn | 1,8192,32,128 | ref | – | – | – |", text)
        self.assertIn("FAILED", text)
        self.assertIn("![prefill speed-up over fla](bench/plots/speedup.svg)", text)
        for name in ("speedup.svg", "time_vs_t.svg"):
            tree = ET.parse(os.path.join(work, "bench", "plots", name))
            self.assertTrue(tree.getroot().tag.endswith("svg"))

    def test_plots_without_data_say_so(self):
        self.assertIn("no data", report.svg_bars("t", [], [], [], []))
        self.assertIn("no data", report.svg_lines("t", [], "x", "y"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
