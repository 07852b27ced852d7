#!/usr/bin/env python3
"""Times RKC builds side by side on one or more specs (bf16 inputs as
bench/benchmark.py draws them, d = 128): each `--variant` is an rkc binary
and the `rkc compile` options to use with it, after any NAME=VALUE words of
environment for `rkc compile` (RKC_NVCC_FLAGS=-D... reaches nvcc). Every
(spec, variant) is built first, all at once (nvcc in parallel); then, spec
after spec, every variant's output is checked against the first's before it
is timed (CUDA events, medians, L2 flushed before each call). A summary of
every row comes last. For A/B work on kernels and schedules; the comparison
with flash-linear-attention is bench/benchmark.py.

  python3 test/gpu/compare.py --spec kda,eda,gdn2 --shape 1,8192,32 \\
      --variant 'main=.devbin/rkc-main' \\
      --variant 'next=.devbin/rkc-next --threads 512'
  python3 test/gpu/compare.py --spec eda --decode 64,32 --decode 256,16 \\
      --variant 'main=.devbin/rkc-main' \\
      --variant 'blocks4=RKC_NVCC_FLAGS=-DRKC_DECODE_BLOCKS=4 .devbin/rkc-next'

With --decode N,H (repeatable) the one-token decode kernel is timed instead
(N sequences, H heads), with its compulsory bytes' GB/s and their share of
the copy bandwidth measured in the same process. A build is kept in --work
with the key it was made from (the binary's path, size and time, the spec,
the options and the environment) and reused while that key holds, so that a
prefill run and a decode run of the same variants build once.
"""
import argparse
import json
import os
import re
import shlex
import sys
from concurrent import futures

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

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
    if not name or not words:
        raise SystemExit("--variant %r: give NAME=[ENV=VALUE ...] RKC [options]"
                         % text)
    return name, env, words[0], words[1:]


def build_key(rkc, spec, d, options, env):
    """What a build depends on that this script can see: the rkc binary (by
    path, size and modification time), the spec, d, the options and the
    environment given for it."""
    st = os.stat(rkc)
    return json.dumps({"rkc": os.path.abspath(rkc), "size": st.st_size,
                       "mtime_ns": st.st_mtime_ns, "spec": spec, "d": d,
                       "options": list(options), "env": env}, sort_keys=True)


def cached_build(rkc, spec, d, work, options, env, build):
    """`build` (check.build's signature) unless `work` holds a build of the
    same key; the key is written only after a build succeeds."""
    folder = os.path.join(work, "%s_d%d" % (spec, d))
    key_path = os.path.join(folder, "compare.key")
    key = build_key(rkc, spec, d, options, env)
    library = os.path.join(folder, "lib%s.so" % spec)
    if os.path.exists(library) and os.path.exists(key_path):
        with open(key_path) as f:
            if f.read() == key:
                return folder
    if os.path.exists(key_path):
        os.remove(key_path)
    folder = build(rkc, spec, d, work, options, env)
    with open(key_path, "w") as f:
        f.write(key)
    return folder


def cases(args):
    """(title, inputs, initial state or None, B, T, H) for each shape of
    `args.spec` (one spec)."""
    from benchmark import Draw, draw_inputs
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


def one_call(folder, spec, shape, decode):
    """A call of a built library's kernel (prefill, or decode with `decode`
    N,H) on the first case cases() draws for `spec` at `shape` (B,T,H) or
    `decode`, its outputs in buffers of their own: for the tools that run
    one kernel (kernel_profile.py, decode_stamps.py)."""
    import torch
    from check import Kernels
    args = argparse.Namespace(spec=spec, shape=shape,
                              decode=[decode] if decode else None)
    _, x, initial, B, T, H = cases(args)[0]
    o = torch.empty(B, T, H, D, device="cuda", dtype=torch.bfloat16)
    final = torch.empty(B, H, D, D, device="cuda")
    kernels = Kernels(folder, spec)
    return lambda: kernels.call("decode" if decode else "prefill", x, o,
                                initial, final)


def summary_line(spec, title, rows):
    """One line of the summary: each variant's ms (and share of copy), then
    the first variant's time over each other's (above 1: faster than the
    first). `rows`: (name, ms or None, note, percent of copy or None)."""
    timed = [(n, ms, pct) for n, ms, _, pct in rows if ms is not None]
    line = "%-16s %-22s" % (spec, title) + "".join(
        " %s %.4f%s" % (n, ms, " (%.0f%%)" % pct if pct is not None else "")
        for n, ms, pct in timed)
    failed = [n for n, ms, _, _ in rows if ms is None]
    if len(timed) > 1:
        base_name, base = timed[0][0], timed[0][1]
        line += " |" + "".join(" %s/%s %.3fx" % (base_name, n, base / ms)
                               for n, ms, _ in timed[1:])
    if failed:
        line += " | not timed: " + ", ".join(failed)
    return line


def stray_words(extra):
    """The error for words the parser did not take (None if there are
    none): rkc compile options given after a variant, split from it by the
    shell, belong inside the variant's one word."""
    if not extra:
        return None
    return ("unrecognized arguments: %s (rkc compile options go inside their "
            "variant, quoted as one word: --variant 'NAME=RKC %s')"
            % (" ".join(extra), " ".join(extra)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True,
                        help="a spec, or several separated by commas")
    parser.add_argument("--shape", default="1,8192,32", help="B,T,H")
    parser.add_argument("--decode", metavar="N,H", action="append",
                        help="time the decode kernel: N sequences, H heads, one token")
    parser.add_argument("--variant", action="append", required=True,
                        help="NAME=[ENV=VALUE ...] RKC [rkc compile options...]")
    parser.add_argument("--work", default="/tmp/rkc-compare")
    parser.add_argument("--rep-ms", type=float, default=40)
    parser.add_argument("--build-only", action="store_true",
                        help="build every (spec, variant) and stop")
    args, extra = parser.parse_known_args()
    if stray_words(extra):
        parser.error(stray_words(extra))
    specs = [s for s in args.spec.split(",") if s]
    variants = [parse_variant(v) for v in args.variant]
    names = [v[0] for v in variants]
    if len(set(names)) != len(names):
        parser.error("variant names must differ: %s" % ", ".join(names))

    import torch
    import benchmark
    from benchmark import copy_bandwidth, measure, nbytes
    from check import Kernels, build, rel

    def make(spec, index):
        name, env, rkc, options = variants[index]
        work = os.path.join(args.work, "%d_%s" % (index, name))
        return cached_build(rkc, spec, D, work, options, env, build)

    # nvcc runs for every (spec, variant) at once.
    with futures.ThreadPoolExecutor(min(16, len(specs) * len(variants))) as pool:
        folders = {(s, i): pool.submit(make, s, i)
                   for s in specs for i in range(len(variants))}
        futures.wait(folders.values())
    if args.build_only:
        failed = [(s, i, f.exception()) for (s, i), f in folders.items()
                  if f.exception()]
        for s, i, e in failed:
            print("%s, %s: build failed: %s" % (s, names[i], str(e)[-300:]))
        sys.exit(1 if failed else 0)
    benchmark.FLUSH = torch.empty(512 << 20, dtype=torch.int8, device="cuda")
    copy = copy_bandwidth(args.rep_ms, 10) if args.decode else None
    summary = []
    for spec in specs:
        shapes = argparse.Namespace(spec=spec, shape=args.shape, decode=args.decode)
        for title, x, initial, B, T, H in cases(shapes):
            o = torch.empty(B, T, H, D, device="cuda", dtype=torch.bfloat16)
            final = torch.empty(B, H, D, D, device="cuda")
            moved = (sum(nbytes(t) for t in x.values()) + nbytes(o) +
                     nbytes(initial) + nbytes(final)) if args.decode else None
            first, rows = None, []
            for index, (name, _, _, _) in enumerate(variants):
                try:
                    kernels = Kernels(folders[(spec, index)].result(), spec)
                except Exception as e:  # a build that fails is a row, not a crash
                    rows.append((name, None, "build failed: %s" % str(e)[-300:], None))
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
                pct = 100 * moved / ms / 1e6 / copy if moved else None
                rows.append((name, ms, "%.2e" % error, pct))
            print("\n%s at %s, bf16, d = %d, %s" % (
                spec, title, D, torch.cuda.get_device_name()))
            if copy:
                print("copy bandwidth %.0f GB/s" % copy)
            print("%-12s %10s %10s %s %s" % ("variant", "ms", "vs first",
                                             " GB/s  copy" if moved else "",
                                             " o/S vs first"))
            base = next((ms for _, ms, _, _ in rows if ms), None)
            for name, ms, note, pct in rows:
                if ms is None:
                    print("%-12s %10s %10s  %s" % (name, "-", "-", note))
                    continue
                rate = ("%6.0f %4.0f%%" % (moved / ms / 1e6, pct)) if moved else ""
                print("%-12s %10.4f %9.2fx %s  %s" % (name, ms, base / ms, rate, note),
                      flush=True)
            summary.append(summary_line(spec, title, rows))
    print("\nSummary (%s%s): first / other above 1 is the other faster" % (
        torch.cuda.get_device_name(),
        ", copy %.0f GB/s" % copy if copy else ""))
    print("\n".join(summary))


if __name__ == "__main__":
    main()
