"""test/gpu/decode_stamps.py's parts that need no GPU: the rows each warp of
a generated decode kernel loads (from rkc compile's real output), the stamp
lines of the timed call, and the report.

  python3 test/python/test_decode_stamps.py RKC WORK_DIR
"""
import os
import subprocess
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "gpu"))
import decode_stamps  # noqa: E402

RKC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "rkc")
WORK = sys.argv.pop(1) if len(sys.argv) > 1 else "/tmp/rkc-test-decode-stamps"


def generated(spec):
    folder = os.path.join(WORK, spec)
    subprocess.run([RKC, "compile", os.path.join(ROOT, "examples", "specs", spec + ".mlir"),
                    "-o", folder, "--no-fatbin"], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(folder, spec + ".cu")) as f:
        return f.read()


class WarpRoles(unittest.TestCase):
    def test_gdn2_one_row_a_warp(self):
        roles = decode_stamps.warp_roles(generated("gdn2"), "gdn2")
        self.assertEqual(roles[0], ["s0 gate"])
        self.assertEqual(roles[1], ["s0 erase_along"])  # k: also the key rows
        self.assertEqual(roles[2], ["s0 read"])
        self.assertEqual(sorted(r for rs in roles.values() for r in rs),
                         sorted(["s0 gate", "s0 erase_along", "s0 read",
                                 "s0 strength", "s0 value", "s0 query"]))

    def test_eda_two_substeps(self):
        roles = decode_stamps.warp_roles(generated("eda"), "eda")
        rows = [r for rs in roles.values() for r in rs]
        self.assertIn("s0 gate", rows)
        self.assertIn("s1 query", rows)
        self.assertLessEqual(max(roles), 7)  # 256 threads: warps 0..7

    def test_no_decode_kernel(self):
        with self.assertRaises(ValueError):
            decode_stamps.warp_roles("int main() {}", "gdn2")


STAMPS = """\
rkc-profile-decode block 0 warp 0 loads 900 barrier 10 sums 5000
some other line
rkc-decode-stamps: timed call
rkc-profile-decode block 0 warp 0 loads 400 barrier 100 sums 3000
rkc-profile-decode block 0 warp 1 loads 600 barrier 0 sums 3100
rkc-profile-decode block 1024 warp 0 loads 600 barrier 50 sums 2000
"""


class Stamps(unittest.TestCase):
    def test_only_the_timed_call(self):
        stamps = decode_stamps.parse_stamps(STAMPS)
        self.assertEqual(stamps, [(0, 0, 400, 100, 3000), (0, 1, 600, 0, 3100),
                                  (1024, 0, 600, 50, 2000)])

    def test_means_by_warp_and_the_table(self):
        summary = decode_stamps.summarize(decode_stamps.parse_stamps(STAMPS))
        self.assertEqual(summary[0], (2, 500.0, 75.0, 2500.0))
        self.assertEqual(summary[1], (1, 600.0, 0.0, 3100.0))
        text = decode_stamps.table({0: ["s0 gate"], 1: ["s0 read", "s0 query"],
                                    2: []}, summary)
        self.assertIn("| 0 | s0 gate | 2 | 500 | 75 | 2500 |", text)
        self.assertIn("| 1 | s0 read, s0 query | 1 | 600 | 0 | 3100 |", text)
        self.assertIn("| 2 | (none) | 0 | 0 | 0 | 0 |", text)


if __name__ == "__main__":
    unittest.main()
