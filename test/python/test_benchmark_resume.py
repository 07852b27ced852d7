"""bench/benchmark.py's --rows and --resume without a GPU: main() with the
device, the compiling and the measuring stood in for (a row is "measured" by
a stand-in that records it), a run cut short by its time limit, then a run
that resumes it: the second compiles only the specs with rows missing,
measures only those rows, with the seeds the first would have used, and
reports every row; rows of another commit are refused. PyTorch on the CPU
(Debian's python3-torch, which scripts/build.sh installs).

  /usr/bin/python3 test/python/test_benchmark_resume.py [WORK_DIR]
"""
import os
import sys
import tempfile
import types
import unittest
from unittest import mock

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch  # noqa: E402
import benchmark  # noqa: E402
import report  # noqa: E402

WORK = sys.argv[1] if len(sys.argv) > 1 else None


def read(path):
    with open(path) as f:
        return f.read()


class StandIn:
    """The GPU's side of a run: which specs were compiled, which rows
    measured (with the seed each drew); after `budget` rows, the rest are
    not run, as --time-limit leaves them."""

    def __init__(self, budget=None):
        self.compiled, self.measured, self.budget = [], [], budget

    def precompile(self, specs, dims, python_dir, warm_args):
        self.compiled += specs
        return {}

    def run_row(self, section, spec, shape, make_case, args, compile_errors):
        row = {"section": section, "spec": spec, "shape": shape, "status": "ok",
               "label": "ref", "note": "", "err_o": 1e-4, "err_s": 1e-4,
               "rkc": report.Timing([1.0]), "fla": report.Timing([2.0]),
               "bytes": 1e9, "mem_rkc": (0, 0), "mem_fla": (0, 0)}
        if self.budget is not None and len(self.measured) >= self.budget:
            row.update(status="not run: past --time-limit", rkc=None, fla=None)
            return row
        self.measured.append((section, spec, shape, make_case()))
        return row


def run(work, stand_in, *extra, quick=True):
    rkc = os.path.join(work, "rkc")   # hashed into the run's identity
    if not os.path.exists(rkc):
        with open(rkc, "w") as f:
            f.write("a stand-in for the rkc binary\n")
    argv = ["benchmark.py", "--rkc", rkc, "--fla", work, "--specs", "kda,gdn",
            "--commit", "abc1234", "--fla-commit", "bc3b101d",
            "--out", os.path.join(work, "BENCHMARKS.md")] + (
            ["--quick"] if quick else []) + list(extra)
    # A case's seed is all the stand-in keeps of it.
    case = lambda *shape_and_seed: shape_and_seed[-1]  # noqa: E731
    # rkc_torch as main() imports it (its ops need a newer PyTorch than the
    # CPU's, and no kernel is built here).
    library = types.ModuleType("rkc_torch._library")
    library.library = None
    binding = types.ModuleType("rkc_torch")
    binding._library = library
    with mock.patch.object(sys, "argv", argv), \
            mock.patch.dict(sys.modules, {"rkc_torch": binding,
                                          "rkc_torch._library": library}), \
            mock.patch.object(torch.cuda, "is_available", lambda: True), \
            mock.patch.object(torch.cuda, "get_device_name", lambda *a: "a test GPU"), \
            mock.patch.object(torch, "empty", lambda *a, **k: None), \
            mock.patch.object(benchmark, "precompile", stand_in.precompile), \
            mock.patch.object(benchmark, "run_row", stand_in.run_row), \
            mock.patch.object(benchmark, "copy_bandwidth", lambda *a: 4000.0), \
            mock.patch.object(benchmark, "prefill_case", case), \
            mock.patch.object(benchmark, "decode_case", case), \
            mock.patch("builtins.print"):
        benchmark.main()


class Resume(unittest.TestCase):
    def setUp(self):
        self.work = WORK or tempfile.mkdtemp(prefix="rkc-resume-")
        os.makedirs(self.work, exist_ok=True)

    def test_a_run_cut_short_is_finished_by_another(self):
        # --quick, kda and gdn: two prefill rows, two decode rows, kda's
        # sweep (2048, 4096, 8192); seven rows in all.
        whole = StandIn()
        run(self.work, whole, "--rows", os.path.join(self.work, "whole.jsonl"))
        self.assertEqual(len(whole.measured), 7)

        first = StandIn(budget=3)
        run(self.work, first, "--rows", os.path.join(self.work, "first.jsonl"))
        self.assertEqual(first.compiled, ["kda", "gdn"])
        _, rows = report.rows_from_json(read(os.path.join(self.work, "first.jsonl")))
        self.assertEqual([r["status"] for r in rows].count("ok"), 3)

        second = StandIn()
        run(self.work, second, "--rows", os.path.join(self.work, "second.jsonl"),
            "--resume", os.path.join(self.work, "first.jsonl"))
        # The first run measured both prefill rows and kda's decode row:
        # gdn's decode row and kda's sweep are left, and only they run, with
        # the seeds the whole run gave them.
        self.assertEqual([m[:2] for m in second.measured],
                         [("decode", "gdn")] + [("T sweep", "kda")] * 3)
        self.assertEqual(second.measured, whole.measured[3:])
        self.assertEqual(second.compiled, ["kda", "gdn"])
        _, rows = report.rows_from_json(read(os.path.join(self.work, "second.jsonl")))
        self.assertEqual(len(rows), 7)
        self.assertEqual(sum(1 for r in rows if r.get("resumed")), 3)
        self.assertTrue(all(r["status"] == "ok" for r in rows))
        text = read(os.path.join(self.work, "BENCHMARKS.md"))
        self.assertIn("| rows of an earlier run | 3, marked", text)

        # Everything measured: nothing left to compile.
        third = StandIn()
        run(self.work, third, "--rows", os.path.join(self.work, "third.jsonl"),
            "--resume", os.path.join(self.work, "second.jsonl"))
        self.assertEqual((third.compiled, third.measured), ([], []))

    def test_a_row_cut_short_is_left_out(self):
        rows = os.path.join(self.work, "cut.jsonl")
        run(self.work, StandIn(), "--rows", rows)
        # A run killed while writing its third row's line (were the file not
        # renamed into place whole): the identity, two rows and a cut one.
        lines = read(rows).splitlines()
        with open(rows, "w") as f:
            f.write("\n".join(lines[:4])[:-40])
        second = StandIn()
        with mock.patch("sys.stderr"):
            run(self.work, second, "--rows", os.path.join(self.work, "cut2.jsonl"),
                "--resume", rows)
        # Two rows were whole; the third is measured again, with the rest.
        self.assertEqual(len(second.measured), 5)

    def test_the_sweep_takes_a_resumed_prefill_row_at_its_shape(self):
        # Without --quick the sweep reaches (1, 32768, 16, 128), one of the
        # prefill shapes: its row is the prefill row, also when resumed in
        # a run that measures the sweep alone.
        whole = StandIn()
        rows = os.path.join(self.work, "full.jsonl")
        run(self.work, whole, "--rows", rows, quick=False)
        self.assertEqual(len(whole.measured), 6 + 4 + 5)
        again = StandIn()
        run(self.work, again, "--rows", os.path.join(self.work, "sweep.jsonl"),
            "--resume", rows, "--sections", "sweep", quick=False)
        self.assertEqual((again.compiled, again.measured), ([], []))
        text = read(os.path.join(self.work, "BENCHMARKS.md"))
        self.assertIn("| rows of an earlier run | 6, marked", text)   # once each

    def test_another_method_is_refused(self):
        rows = os.path.join(self.work, "seed1.jsonl")
        run(self.work, StandIn(), "--rows", rows)
        with self.assertRaises(SystemExit) as stop:
            run(self.work, StandIn(), "--rows", os.path.join(self.work, "x.jsonl"),
                "--resume", rows, "--seed", "7")
        self.assertIn("method 'seed 1, rep 200 ms, warm-up 30 ms', this run "
                      "'seed 7, rep 200 ms, warm-up 30 ms'", str(stop.exception))

    def test_rows_of_another_commit_are_refused(self):
        first = StandIn()
        rows = os.path.join(self.work, "other.jsonl")
        run(self.work, first, "--rows", rows)
        text = read(rows).replace('"abc1234"', '"def5678"', 1)
        with open(rows, "w") as f:
            f.write(text)
        with self.assertRaises(SystemExit) as stop:
            run(self.work, StandIn(), "--rows", os.path.join(self.work, "x.jsonl"),
                "--resume", rows)
        self.assertIn("rkc_commit 'def5678', this run 'abc1234'", str(stop.exception))

    def test_resume_may_not_overwrite_itself(self):
        rows = os.path.join(self.work, "same.jsonl")
        run(self.work, StandIn(), "--rows", rows)
        with self.assertRaises(SystemExit), mock.patch("sys.stderr"):
            run(self.work, StandIn(), "--rows", rows, "--resume", rows)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
