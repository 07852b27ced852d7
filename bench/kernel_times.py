#!/usr/bin/env python3
"""Per-kernel GPU time of RKC's prefill call and fla's, side by side.

Runs benchmark.py's prefill case of each spec (the same inputs on both sides)
under torch.profiler and prints, for each side, every kernel it launches:
calls and microseconds an iteration and its share of the side's kernel time.
For planning kernel work (which of fla's kernels does what ours take how long
for); the ratios of record are benchmark.py's, with L2 flushed between calls,
which this does not do.

  python3 bench/kernel_times.py --rkc .devbin/rkc --fla .fla --specs gdn,kda \\
      --shape 1,8192,32 [--iters 20] [--compile-options '...']
"""

import argparse
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def per_iteration(events, iters):
    """[(kernel name, calls an iteration, µs an iteration)], longest first,
    from profiler averages (objects with key, count and a self device time
    in µs); events without device time (host-side ops) are left out."""
    totals = collections.defaultdict(lambda: [0, 0.0])
    for e in events:
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0.0)
        if us <= 0:
            continue
        totals[e.key][0] += e.count
        totals[e.key][1] += us
    return sorted(((name, calls / iters, us / iters)
                   for name, (calls, us) in totals.items()),
                  key=lambda r: (-r[2], r[0]))


def kernel_times(fn, iters):
    """per_iteration() of `fn` under torch.profiler, and the iterations'
    median wall time in µs (CUDA events; the upper middle value for an even
    count), each call after the last one finished."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    rows = per_iteration(prof.key_averages(), iters)
    walls = []
    for _ in range(iters):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        fn()
        end.record()
        end.synchronize()
        walls.append(start.elapsed_time(end) * 1000)
    return rows, sorted(walls)[len(walls) // 2]


def parse_shape(text):
    """(B, T, H) from "B,T,H", or None."""
    try:
        shape = tuple(int(x) for x in text.split(","))
    except ValueError:
        return None
    return shape if len(shape) == 3 and min(shape) > 0 else None


def show(side, rows, wall, out=sys.stdout):
    total = sum(us for _, _, us in rows) or 1.0
    print("  %s: kernels %.1f µs an iteration, wall %.1f µs" % (
        side, sum(us for _, _, us in rows), wall), file=out)
    for name, calls, us in rows:
        print("    %7.1f µs %5.1f%%  x%-4g %s" % (us, 100 * us / total, calls,
                                                 name[:90]), file=out)


def main():
    import torch
    sys.path.insert(0, HERE)
    import benchmark
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    benchmark.add_source_arguments(parser)
    parser.add_argument("--specs", default="gdn,kda")
    parser.add_argument("--shape", default="1,8192,32", help="B,T,H")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--compile-options", default="")
    args = parser.parse_args()
    shape = parse_shape(args.shape)
    if shape is None:
        parser.error("--shape takes B,T,H (three positive integers), got %r" %
                     args.shape)
    if args.iters < 1:
        parser.error("--iters must be at least 1")
    specs = benchmark.parse_specs(parser, args.specs)
    if not torch.cuda.is_available():
        sys.exit("kernel_times.py: no CUDA device")
    fla_root = benchmark.fla_path(args.fla)
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    sys.path.insert(0, fla_root)
    os.environ["RKC"] = os.path.abspath(args.rkc)
    os.environ["RKC_COMPILE_OPTIONS"] = args.compile_options
    # As benchmark.py: fla autotunes here, not from choices kept on disk.
    os.environ["FLA_CACHE_RESULTS"] = "0"
    import rkc_torch
    benchmark.rkc_torch = rkc_torch
    B, T, H = shape
    print("%s, B,T,H,D = %d,%d,%d,%d, %d iterations" % (
        torch.cuda.get_device_name(), B, T, H, args.dim, args.iters))
    with torch.inference_mode():
        for spec in specs:
            case = benchmark.prefill_case(spec, B, T, H, args.dim, seed=1)
            print("%s (reference: %s)" % (spec, case.label))
            show("rkc", *kernel_times(case.rkc, args.iters))
            if case.fla:
                show("fla", *kernel_times(case.fla, args.iters))


if __name__ == "__main__":
    main()
