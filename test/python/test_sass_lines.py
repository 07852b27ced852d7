"""bench/sass_lines.py without nvdisasm or a GPU: a made-up nvdisasm -g
listing (line records, an instruction the disassembler left out), a made-up
Nsight Compute export of the same kernel, and the ELF header rewrite.

  python3 test/python/test_sass_lines.py WORK_DIR
"""
import os
import struct
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_lines  # noqa: E402

LISTING = """\
//--------------------- .text.other_kernel --------------------------
.text.other_kernel:
        /*0000*/                   EXIT ;
//--------------------- .text.made_up_kernel --------------------------
\t.section\t.text.made_up_kernel,"ax",@progbits
.text.made_up_kernel:
\t//## File "/tmp/x/k.cu", line 10
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   IMAD.MOV.U32 R2, RZ, RZ, R1 ;
\t//## File "/tmp/x/rkc/tile.cuh", line 160
        /*0020*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0040*/               @!P0 IMAD R3, R2, 0x4, R3 ;
\t//## File "/tmp/x/k.cu", line 10
        /*0050*/                   EXIT ;
//--------------------- .text.last_kernel --------------------------
.text.last_kernel:
        /*0000*/                   EXIT ;
"""

# (offset from the first, source, samples, executed): 0x30 is the
# instruction the listing lacks, counted under the line before (tile.cuh).
PROFILE = [
    (0x00, "LDC R1, c[0x0][0x28]", 1, 10),
    (0x10, "IMAD.MOV.U32 R2, RZ, RZ, R1", 1, 10),
    (0x20, "HMMA.16816.F32.BF16 R4, R8, R12, R4", 30, 100),
    (0x30, "SOMETHING_NEW R5, R6", 2, 100),
    (0x40, "@!P0 IMAD R3, R2, 0x4, R3", 6, 100),
    (0x50, "EXIT", 0, 10),
]


class SassLines(unittest.TestCase):
    def test_listing(self):
        at = sass_lines.listing(LISTING, "made_up_kernel")
        self.assertEqual(sorted(at), [0x00, 0x10, 0x20, 0x40, 0x50])
        self.assertEqual(at[0x20], (("tile.cuh", 160),
                                    "HMMA.16816.F32.BF16 R4, R8, R12, R4"))
        self.assertEqual(at[0x50][0], ("k.cu", 10))

    def test_static_lines(self):
        ranked, missing = sass_lines.by_line(
            sass_lines.listing(LISTING, "made_up_kernel"))
        self.assertEqual(missing, 0)
        self.assertEqual([(w, n) for w, n, _, _ in ranked],
                         [(("k.cu", 10), 3), (("tile.cuh", 160), 2)])
        self.assertEqual(ranked[1][3], {"HMMA": 1, "IMAD": 1})

    def test_profiled_lines(self):
        path = os.path.join(WORK, "made_up.sass.csv")
        with open(path, "w") as f:
            f.write('"Kernel Name","made_up_kernel",\n')
            f.write('"Address","Source","Warp Stall Sampling (All Samples)",'
                    '"Instructions Executed"\n')
            for offset, source, samples, executed in PROFILE:
                f.write('"0x%x","%s","%d","%d"\n' % (0x7f0000 + offset, source,
                                                     samples, executed))
        ranked, missing = sass_lines.by_line(
            sass_lines.listing(LISTING, "made_up_kernel"), path)
        self.assertEqual(missing, 1)
        tile, k = ranked
        self.assertEqual(tile[:3], (("tile.cuh", 160), 300, 38))
        self.assertEqual(tile[3], {"HMMA": 100, "SOMETHING_NEW": 100,
                                   "IMAD": 100})
        self.assertEqual(k[:3], (("k.cu", 10), 30, 2))

    def test_old_header(self):
        src, dst = os.path.join(WORK, "new.cubin"), os.path.join(WORK, "old.cubin")
        header = bytearray(64)
        header[:4] = b"\x7fELF"
        header[8] = 8
        struct.pack_into("<I", header, 0x30, 0x6005A04)
        with open(src, "wb") as f:
            f.write(bytes(header) + b"rest")
        sass_lines.old_header(src, dst)
        data = open(dst, "rb").read()
        self.assertEqual(data[8], 7)
        self.assertEqual(struct.unpack_from("<I", data, 0x30)[0], 0x5A055A)
        self.assertEqual(data[64:], b"rest")
        # A header already in the old form is copied as it is.
        sass_lines.old_header(dst, src)
        self.assertEqual(open(src, "rb").read(), data)

    def test_loops(self):
        # A chunk loop of four instructions around an inner loop of one, a
        # forward branch and the closing branch to itself, which are no
        # loops; another kernel's label of the same name does not count.
        listing = """\
//--------------------- .text.looping_kernel --------------------------
.text.looping_kernel:
        /*0000*/                   MOV R1, RZ ;
.L_x_1:
        /*0010*/                   IMAD R2, R1, 0x4, RZ ;
.L_x_2:
        /*0020*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0030*/               @P1 BRA `(.L_x_2) ;
        /*0040*/                   LEA R3, R2, R1, 0x2 ;
        /*0050*/               @P0 BRA `(.L_x_1) ;
        /*0060*/                   BRA `(.L_x_3) ;
.L_x_3:
        /*0070*/                   EXIT ;
.L_x_4:
        /*0080*/                   BRA `(.L_x_4);
//--------------------- .text.last_kernel --------------------------
.text.last_kernel:
.L_x_1:
        /*0000*/                   EXIT ;
"""
        at = sass_lines.listing(listing, "looping_kernel")
        targets = sass_lines.labels(listing, "looping_kernel")
        self.assertEqual(targets, {".L_x_1": 0x10, ".L_x_2": 0x20, ".L_x_3": 0x70,
                                   ".L_x_4": 0x80})
        found = sass_lines.loops(at, targets)
        self.assertEqual([(f, l, n) for f, l, n, _ in found],
                         [(0x10, 0x50, 5), (0x20, 0x30, 2)])
        self.assertEqual(found[0][3], {"IMAD": 1, "HMMA": 1, "BRA": 2, "LEA": 1})

    def test_not_a_kernel(self):
        with self.assertRaises(SystemExit):
            sass_lines.listing(LISTING, "missing_kernel")


if __name__ == "__main__":
    WORK = sys.argv.pop(1) if len(sys.argv) > 1 else "/tmp/rkc-sass-lines"
    os.makedirs(WORK, exist_ok=True)
    unittest.main(verbosity=1)
