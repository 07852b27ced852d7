"""bench/kernel_times.py's tally without a GPU or PyTorch: made-up profiler
averages (kernels, a host-side op, a kernel under two keys' worth of calls)
and the printed table.

  python3 test/python/test_kernel_times.py
"""
import io
import os
import sys
import unittest
from types import SimpleNamespace

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import kernel_times  # noqa: E402


def event(key, count, us, attr="self_device_time_total"):
    return SimpleNamespace(key=key, count=count, **{attr: us})


class PerIteration(unittest.TestCase):
    def test_tally(self):
        events = [event("prep_kernel", 10, 5000.0),
                  event("aten::empty", 20, 0.0),  # host-side: no device time
                  event("scan_kernel", 10, 6000.0),
                  event("fill", 20, 300.0, attr="self_cuda_time_total")]
        rows = kernel_times.per_iteration(events, 10)
        self.assertEqual(rows, [("scan_kernel", 1.0, 600.0),
                                ("prep_kernel", 1.0, 500.0),
                                ("fill", 2.0, 30.0)])

    def test_show(self):
        out = io.StringIO()
        kernel_times.show("rkc", [("scan_kernel", 1.0, 600.0),
                                  ("prep_kernel", 1.0, 400.0)], 1100.0, out)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0],
                         "  rkc: kernels 1000.0 µs an iteration, wall 1100.0 µs")
        self.assertIn(" 600.0 µs  60.0%  x1    scan_kernel", lines[1])
        self.assertIn(" 400.0 µs  40.0%  x1    prep_kernel", lines[2])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
