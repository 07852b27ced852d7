#!/usr/bin/env python3
"""Times RKC builds side by side on one spec and shape (bf16 inputs as
bench/benchmark.py draws them, d = 128): each `--variant` is an rkc binary
and the `rkc compile` options to use with it. Every variant's prefill output
is checked against the first's before it is timed (CUDA events through
triton's do_bench, medians). For A/B work on kernels and schedules; the
comparison with flash-linear-attention is bench/benchmark.py.

  python3 test/gpu/compare.py --spec kda --shape 1,8192,32 \\
      --variant 'main=.devbin/rkc-main' \\
      --variant 'next=.devbin/rkc-next --threads 512'
"""
import argparse
import os
import shlex
import sys

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from check import Kernels, build, rel  # noqa: E402
from benchmark import Draw, draw_inputs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True)
    parser.add_argument("--shape", default="1,8192,32", help="B,T,H")
    parser.add_argument("--variant", action="append", required=True,
                        help="NAME=RKC [rkc compile options...]")
    parser.add_argument("--work", default="/tmp/rkc-compare")
    parser.add_argument("--rep-ms", type=float, default=40)
    args = parser.parse_args()
    B, T, H = [int(x) for x in args.shape.split(",")]
    D = 128
    x, _ = draw_inputs(args.spec, Draw(1), B, T, H, D)
    first, rows = None, []
    for index, variant in enumerate(args.variant):
        name, _, rest = variant.partition("=")
        words = shlex.split(rest)
        rkc, options = words[0], words[1:]
        work = os.path.join(args.work, "%d_%s" % (index, name))
        try:
            kernels = Kernels(build(rkc, args.spec, D, work, options), args.spec)
        except Exception as e:  # a build that fails is a row, not a crash
            rows.append((name, None, "build failed: %s" % str(e)[-300:]))
            print(rows[-1], flush=True)
            continue
        o = torch.full((B, T, H, D), float("nan"), device="cuda",
                       dtype=torch.bfloat16)
        final = torch.empty(B, H, D, D, device="cuda")

        def call():
            kernels.call("prefill", x, o, None, final)

        call()
        torch.cuda.synchronize()
        got = (o.double().cpu(), final.double().cpu())
        if first is None:
            first = got
        error = max(rel(got[0], first[0]), rel(got[1], first[1]))
        ms = triton.testing.do_bench(call, warmup=3, rep=args.rep_ms,
                                     return_mode="median")
        rows.append((name, ms, "%.2e" % error))
        print(rows[-1], flush=True)
    print("\n%s at B,T,H = %s, bf16, d = %d, %s" % (
        args.spec, args.shape, D, torch.cuda.get_device_name()))
    print("%-12s %10s %10s  %s" % ("variant", "ms", "vs first", "o/S vs first"))
    base = next((ms for _, ms, _ in rows if ms), None)
    for name, ms, note in rows:
        if ms is None:
            print("%-12s %10s %10s  %s" % (name, "-", "-", note))
        else:
            print("%-12s %10.3f %9.2fx  %s" % (name, ms, base / ms, note))


if __name__ == "__main__":
    main()
