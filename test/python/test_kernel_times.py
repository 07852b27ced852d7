"""bench/kernel_times.py's tally without a GPU or PyTorch: made-up profiler
averages (kernels, a host-side op, a kernel listed twice), the printed table
and the shape argument.

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
                  event("fill", 20, 300.0, attr="self_cuda_time_total"),
                  event("scan_kernel", 10, 1000.0)]  # listed twice: summed
        rows = kernel_times.per_iteration(events, 10)
        self.assertEqual(rows, [("scan_kernel", 2.0, 700.0),
                                ("prep_kernel", 1.0, 500.0),
                                ("fill", 2.0, 30.0)])

    def test_shape(self):
        self.assertEqual(kernel_times.parse_shape("1,8192,32"), (1, 8192, 32))
        for bad in ("1,8192", "1,x,32", "0,8192,32", "1,8192,32,4"):
            self.assertIsNone(kernel_times.parse_shape(bad))

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
