"""bench/sass_profile.py, the half of test/gpu/kernel_profile.py that reads Nsight
Compute's SASS export (no GPU, no ncu): a made-up export of a two-barrier
kernel, its phases, stall reasons and opcodes.

  python3 test/python/test_sass_profile.py WORK_DIR
"""
import os
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import sass_profile  # noqa: E402

HEADER = ['"Address"', '"Source"', '"Warp Stall Sampling (All Samples)"',
          '"Warp Stall Sampling (Not-issued Samples)"',
          '"Instructions Executed"', '"L1 Wavefronts Shared"',
          '"L1 Wavefronts Shared Ideal"', '"stall_barrier"', '"stall_long_sb"',
          '"stall_mio"', '"stall_barrier (Not Issued)"']
# address, source, samples, not issued, executed, wavefronts, ideal,
# barrier, long_sb, mio, barrier (not issued)
LINES = [
    ("0x10", "S2R R0, SR_TID.X", 2, 1, 100, "-", "-", 0, 0, 0, 0),
    ("0x20", "@!P0 LDG.E.64 R2, desc[UR4][R4.64]", 30, 20, 100, "-", "-", 0, 30, 0, 0),
    ("0x30", "STS [R1], R2", 8, 4, 100, 400, 100, 0, 0, 8, 0),
    ("0x40", "BAR.SYNC.DEFER_BLOCKING 0x0", 40, 40, 100, "-", "-", 40, 0, 0, 40),
    ("0x50", "LDS R6, [R1]", 5, 2, 300, 300, 300, 0, 0, 5, 0),
    ("0x60", "FFMA R7, R6, R6, R7", 1, 0, 300, "-", "-", 0, 0, 0, 0),
    ("0x70", "BAR.SYNC.DEFER_BLOCKING 0x0", 10, 10, 100, "-", "-", 10, 0, 0, 10),
    ("0x80", "EXIT", 4, 0, "1,000", "-", "-", 0, 0, 0, 0),
]


def write_export(path):
    with open(path, "w") as f:
        f.write('"Kernel Name","rkc_made_up_kernel",\n')
        f.write(",".join(HEADER) + "\n")
        for line in LINES:
            f.write(",".join('"%s"' % x for x in line) + "\n")


class SassProfileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = os.path.join(WORK, "made_up.sass.csv")
        write_export(cls.path)
        cls.rows = sass_profile.read_source_csv(cls.path)

    def test_reads_every_instruction(self):
        self.assertEqual(len(self.rows), len(LINES))
        self.assertEqual(self.rows[1]["Source"],
                         "@!P0 LDG.E.64 R2, desc[UR4][R4.64]")

    def test_opcode_drops_guard_and_modifiers(self):
        self.assertEqual(sass_profile.opcode("@!P0 LDG.E.64 R2, [R4]"), "LDG")
        self.assertEqual(sass_profile.opcode("BAR.SYNC.DEFER_BLOCKING 0x0"), "BAR")
        self.assertEqual(sass_profile.opcode(""), "?")

    def test_numbers(self):
        self.assertEqual(sass_profile.number("-"), 0.0)
        self.assertEqual(sass_profile.number("1,024"), 1024.0)

    def test_phases_end_at_barriers(self):
        phases = sass_profile.phases(self.rows)
        self.assertEqual([(p.first, p.last) for p in phases],
                         [(0, 3), (4, 6), (7, 7)])
        first = phases[0]
        self.assertEqual(first.executed, 400)
        self.assertEqual(first.samples, 80)
        self.assertEqual((first.wavefronts, first.ideal), (400, 100))
        self.assertEqual(first.stalls["long_sb"], 30)
        self.assertEqual(first.stalls["barrier"], 40)
        self.assertNotIn("barrier (Not Issued)", first.stalls)

    def test_report(self):
        text = sass_profile.report(self.rows)
        self.assertIn("8 SASS instructions, 2100 warp instructions executed, "
                      "100 stall samples", text)
        # Shares of the 93 samples that name a reason (the not-issued
        # columns are a subset, not counted again).
        self.assertIn("stall reasons: barrier 54%, long_sb 32%, mio 14%", text)
        self.assertIn("| 0 | 0-3 | 19.0% | 80.0% | 400 (100) | "
                      "S2R 25%, LDG 25%, STS 25%, BAR 25% | "
                      "barrier 51%, long_sb 38%, mio 10% |", text)
        self.assertIn("| 1 | 4-6 | 33.3% | 16.0% | 300 (300) |", text)
        self.assertIn("| 2 | 7-7 | 47.6% | 4.0% | 0 (0) | EXIT 100% |", text)
        # A phase under min_share of both is left out.
        self.assertNotIn("| 1 |", sass_profile.report(self.rows, min_share=40))

    def test_not_an_export(self):
        other = os.path.join(WORK, "other.csv")
        with open(other, "w") as f:
            f.write('"ID","Kernel Name"\n"0","k"\n')
        with self.assertRaisesRegex(ValueError, "no 'Address,Source"):
            sass_profile.read_source_csv(other)


if __name__ == "__main__":
    WORK = sys.argv.pop(1) if len(sys.argv) > 1 else "/tmp/rkc-sass-profile"
    os.makedirs(WORK, exist_ok=True)
    unittest.main(verbosity=1)
