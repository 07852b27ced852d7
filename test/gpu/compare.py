#!/usr/bin/env python3
"""Times RKC builds side by side on one spec and shape (bf16 inputs as
bench/benchmark.py draws them, d = 128): each `--variant` is an rkc binary
and the `rkc compile` options to use with it, after any NAME=VALUE words of
environment for `rkc compile` (RKC_NVCC_FLAGS=-D... reaches nvcc). Every
variant's output is checked against the first's before it is timed (CUDA
events, medians, L2 flushed before each call). For A/B work on kernels and
schedules; the comparison with flash-linear-attention is bench/benchmark.py.

  python3 test/gpu/compare.py --spec kda --shape 1,8192,32 \\
      --variant 'main=.devbin/rkc-main' \\
      --variant 'next=.devbin/rkc-next --threads 512'
  python3 test/gpu/compare.py --spec eda --decode 64,32 --decode 256,16 \\
      --variant 'main=.devbin/rkc-main' \\
      --variant 'blocks4=RKC_NVCC_FLAGS=-DRKC_DECODE_BLOCKS=4 .devbin/rkc-next'

With --decode N,H (repeatable) the one-token decode kernel is timed instead
(N sequences, H heads), with its compulsory bytes' GB/s and their share of
the copy bandwidth measured in the same process.
"""
import argparse
import os
import re
import shlex
import sys
from concurrent import futures

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from check import Kernels, build, rel  # noqa: E402
import benchmark  # noqa: E402
from benchmark import Draw, copy_bandwidth, draw_inputs, measure, nbytes  # noqa: E402

ENV_WORD = re.compile(r"^[A-Z_][A-Z0-9_]*=")
D = 128


def parse_variant(text):
    """NAME=[ENV=VALUE ...] RKC [options...] -> name, env, rkc, options."""
    name, _, rest = text.partition("=")
    words = shlex.split(rest)
    env = {}
    while words and ENV_WORD.match(words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if not words:
        raise SystemExit("--variant %r names no rkc binary" % text)
    return name, env, words[0], words[1:]


def cases(args):
    """(title, inputs, initial state or None, B, T, H) for each shape."""
    draw = Draw(1)
    if not args.decode:
        B, T, H = [int(x) for x in args.shape.split(",")]
        x, _ = draw_inputs(args.spec, draw, B, T, H, D)
        return [("B,T,H = %s" % args.shape, x, None, B, T, H)]
    out = []
    for shape in args.decode:
        N, H = [int(x) for x in shape.split(",")]
        x, _ = draw_inputs(args.spec, draw, N, 1, H, D)
        out.append(("decode N,H = %s" % shape, x,
                    0.1 * draw.normal(N, H, D, D), N, 1, H))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True)
    parser.add_argument("--shape", default="1,8192,32", help="B,T,H")
    parser.add_argument("--decode", metavar="N,H", action="append",
                        help="time the decode kernel: N sequences, H heads, one token")
    parser.add_argument("--variant", action="append", required=True,
                        help="NAME=[ENV=VALUE ...] RKC [rkc compile options...]")
    parser.add_argument("--work", default="/tmp/rkc-compare")
    parser.add_argument("--rep-ms", type=float, default=40)
    args = parser.parse_args()
    variants = [parse_variant(v) for v in args.variant]

    def make(index):
        name, env, rkc, options = variants[index]
        work = os.path.join(args.work, "%d_%s" % (index, name))
        return build(rkc, args.spec, D, work, options, env)

    # nvcc runs for every variant at once.
    with futures.ThreadPoolExecutor(len(variants)) as pool:
        folders = [pool.submit(make, i) for i in range(len(variants))]
    benchmark.FLUSH = torch.empty(512 << 20, dtype=torch.int8, device="cuda")
    copy = copy_bandwidth(args.rep_ms, 10) if args.decode else None
    for title, x, initial, B, T, H in cases(args):
        o = torch.empty(B, T, H, D, device="cuda", dtype=torch.bfloat16)
        final = torch.empty(B, H, D, D, device="cuda")
        moved = (sum(nbytes(t) for t in x.values()) + nbytes(o) +
                 nbytes(initial) + nbytes(final)) if args.decode else None
        first, rows = None, []
        for (name, _, _, _), folder in zip(variants, folders):
            try:
                kernels = Kernels(folder.result(), args.spec)
            except Exception as e:  # a build that fails is a row, not a crash
                rows.append((name, None, "build failed: %s" % str(e)[-300:]))
                continue

            def call():
                kernels.call("decode" if args.decode else "prefill", x, o,
                             initial, final)

            o.fill_(float("nan"))
            call()
            torch.cuda.synchronize()
            got = (o.double().cpu(), final.double().cpu())
            if first is None:
                first = got
            error = max(rel(got[0], first[0]), rel(got[1], first[1]))
            ms = measure(call, args.rep_ms, 10).median
            rows.append((name, ms, "%.2e" % error))
        print("\n%s at %s, bf16, d = %d, %s" % (
            args.spec, title, D, torch.cuda.get_device_name()))
        if copy:
            print("copy bandwidth %.0f GB/s" % copy)
        print("%-12s %10s %10s %s %s" % ("variant", "ms", "vs first",
                                         " GB/s  copy" if moved else "",
                                         " o/S vs first"))
        base = next((ms for _, ms, _ in rows if ms), None)
        for name, ms, note in rows:
            if ms is None:
                print("%-12s %10s %10s  %s" % (name, "-", "-", note))
                continue
            rate = ""
            if moved:
                gbs = moved / ms / 1e6
                rate = "%6.0f %4.0f%%" % (gbs, 100 * gbs / copy)
            print("%-12s %10.4f %9.2fx %s  %s" % (name, ms, base / ms, rate, note),
                  flush=True)


if __name__ == "__main__":
    main()
