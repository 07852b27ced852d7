"""test/gpu/compare.py's parts that need no GPU: how a --variant reads, when
a kept build is reused, and the summary line.

  python3 test/python/test_compare.py WORK_DIR
"""
import os
import sys
import time
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "gpu"))
import compare  # noqa: E402

WORK = sys.argv.pop(1) if len(sys.argv) > 1 else "/tmp/rkc-test-compare"


class Variant(unittest.TestCase):
    def test_environment_binary_and_options(self):
        self.assertEqual(
            compare.parse_variant(
                "u4=RKC_NVCC_FLAGS='-DRKC_GRAM_UNROLL=4 -DX=1' .devbin/rkc --threads 512"),
            ("u4", {"RKC_NVCC_FLAGS": "-DRKC_GRAM_UNROLL=4 -DX=1"}, ".devbin/rkc",
             ["--threads", "512"]))
        self.assertEqual(compare.parse_variant("main=build/bin/rkc"),
                         ("main", {}, "build/bin/rkc", []))

    def test_stray_options_name_the_quoting(self):
        self.assertIsNone(compare.stray_words([]))
        message = compare.stray_words(["--value-tile", "16"])
        self.assertIn("unrecognized arguments: --value-tile 16", message)
        self.assertIn("--variant 'NAME=RKC --value-tile 16'", message)

    def test_no_binary_or_no_name(self):
        for text in ("a=RKC_NVCC_FLAGS=-DX", "a=", "=build/bin/rkc"):
            with self.assertRaises(SystemExit, msg=text):
                compare.parse_variant(text)


class CachedBuild(unittest.TestCase):
    def setUp(self):
        self.work = os.path.join(WORK, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.work, exist_ok=True)
        self.rkc = os.path.join(self.work, "rkc")
        with open(self.rkc, "w") as f:
            f.write("one")
        self.builds = 0

    def build(self, rkc, spec, d, work, options, env):
        """check.build's shape: makes work/spec_dD/libspec.so."""
        self.builds += 1
        folder = os.path.join(work, "%s_d%d" % (spec, d))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "lib%s.so" % spec), "w") as f:
            f.write("library")
        return folder

    def run_build(self, options=(), env=None):
        return compare.cached_build(self.rkc, "kda", 128, self.work,
                                    list(options), env or {}, self.build)

    def test_same_key_is_reused(self):
        folder = self.run_build(["--threads", "512"])
        self.assertEqual(folder, os.path.join(self.work, "kda_d128"))
        self.run_build(["--threads", "512"])
        self.assertEqual(self.builds, 1)

    def test_options_environment_or_binary_change_rebuild(self):
        self.run_build()
        self.run_build(["--threads", "512"])
        self.run_build(["--threads", "512"], {"RKC_NVCC_FLAGS": "-DX"})
        self.assertEqual(self.builds, 3)
        time.sleep(0.01)
        with open(self.rkc, "w") as f:  # a rebuilt binary, same path
            f.write("two, longer")
        self.run_build(["--threads", "512"], {"RKC_NVCC_FLAGS": "-DX"})
        self.assertEqual(self.builds, 4)

    def test_failed_build_leaves_no_key(self):
        self.run_build()

        def failing(*args):
            raise RuntimeError("nvcc failed")

        with self.assertRaises(RuntimeError):
            compare.cached_build(self.rkc, "kda", 128, self.work, ["-x"], {}, failing)
        # The earlier build's key is gone with the failed attempt: the next
        # call with the earlier key builds again rather than trusting a
        # folder the failed build may have half rewritten.
        self.run_build()
        self.assertEqual(self.builds, 2)


class Summary(unittest.TestCase):
    def test_ratios_against_the_first(self):
        line = compare.summary_line("kda", "B,T,H = 1,8192,32", [
            ("main", 2.0, "0.00e+00", None), ("next", 1.6, "1e-7", None)])
        self.assertIn("main 2.0000 next 1.6000", line)
        self.assertIn("main/next 1.250x", line)

    def test_copy_share_and_a_failed_variant(self):
        line = compare.summary_line("eda", "decode N,H = 64,32", [
            ("main", 0.08, "0", 84.4), ("bad", None, "build failed: x", None)])
        self.assertIn("main 0.0800 (84%)", line)
        self.assertIn("not timed: bad", line)
        self.assertNotIn("main/", line)


if __name__ == "__main__":
    unittest.main()
