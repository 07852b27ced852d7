#!/usr/bin/env python3
"""Where a decode kernel's warps spend a token, from the clock stamps that
`-DRKC_PROFILE_DECODE` compiles in (GPU machine): builds a spec's kernels
with them (bf16 inputs as bench/benchmark.py draws them, d = 128), runs the
decode kernel once to warm up and once more at N sequences of H heads, and
prints for each warp the rows it loads (read from the generated code) and
its mean cycles over the blocks that print (every 1024th): its row loads
(to its last store of them), its wait at the barrier after them, and the
sums and updates after that.

  python3 test/gpu/decode_stamps.py --rkc build/bin/rkc --spec gdn2 --decode 64,32
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

STAMP = re.compile(r"^rkc-profile-decode block (\d+) warp (\d+) loads (-?\d+) "
                   r"barrier (-?\d+) sums (-?\d+)$")
MARK = "rkc-decode-stamps: timed call"


def warp_roles(cu_text, spec):
    """{warp: ["s0 gate", ...]}: the row functions each warp of the decode
    kernel calls, from the generated source (the kernel's `if (warp == W)`
    blocks)."""
    start = cu_text.find("rkc_%s_decode_kernel(const Params p)" % spec)
    if start < 0:
        raise ValueError("no decode kernel of @%s in the source" % spec)
    roles, warp = {}, None
    for line in cu_text[start:].splitlines():
        m = re.match(r"\s*if \(warp == (\d+)\) \{", line)
        if m:
            warp = int(m.group(1))
            roles.setdefault(warp, [])
            continue
        m = re.match(r"\s*decode_s(\d+)_(\w+)_values\(", line)
        if m and warp is not None:
            roles[warp].append("s%s %s" % (m.group(1), m.group(2)))
        if "RKC_DECODE_STAMP(1)" in line:  # the row loads end here
            break
    return roles


def parse_stamps(text):
    """The stamp lines after the timed call's mark: (block, warp, loads,
    barrier, sums) each."""
    lines = text.splitlines()
    if MARK in lines:
        lines = lines[lines.index(MARK) + 1:]
    out = []
    for line in lines:
        m = STAMP.match(line.strip())
        if m:
            out.append(tuple(int(x) for x in m.groups()))
    return out


def summarize(stamps):
    """{warp: (blocks, mean loads, mean barrier, mean sums)}."""
    by_warp = {}
    for _, warp, loads, barrier, sums in stamps:
        by_warp.setdefault(warp, []).append((loads, barrier, sums))
    return {w: (len(v),) + tuple(sum(x[i] for x in v) / len(v) for i in range(3))
            for w, v in sorted(by_warp.items())}


def table(roles, summary):
    """The report: a row a warp, its rows and its mean cycles."""
    lines = ["| warp | rows it loads | blocks | loads | barrier | sums |",
             "|---|---|---|---|---|---|"]
    for w in sorted(set(roles) | set(summary)):
        n, loads, barrier, sums = summary.get(w, (0, 0.0, 0.0, 0.0))
        lines.append("| %d | %s | %d | %.0f | %.0f | %.0f |" % (
            w, ", ".join(roles.get(w, [])) or "(none)", n, loads, barrier, sums))
    return "\n".join(lines)


def run_once(args):
    """The measured process: the decode kernel twice on the same inputs, the
    mark between the calls (both stdio buffers flushed around it, since the
    kernel's printf goes through C's stdout)."""
    import torch
    from compare import one_call
    call = one_call(args.folder, args.spec, None, args.decode)
    libc = ctypes.CDLL(None)
    for n in range(2):
        if n:
            libc.fflush(None)
            print(MARK, flush=True)
        call()
        torch.cuda.synchronize()
    libc.fflush(None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rkc", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--decode", metavar="N,H", default="64,32",
                        help="N sequences, H heads, one token")
    parser.add_argument("--compile-args", default="",
                        help="more rkc compile options, one string")
    parser.add_argument("--work", default="/tmp/rkc-decode-stamps")
    parser.add_argument("--run-once", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_once:
        return run_once(args)
    from check import build
    flags = os.environ.get("RKC_NVCC_FLAGS", "")
    print("building %s with -DRKC_PROFILE_DECODE ..." % args.spec, flush=True)
    folder = build(args.rkc, args.spec, 128, args.work, args.compile_args.split(),
                   {"RKC_NVCC_FLAGS": (flags + " -DRKC_PROFILE_DECODE").strip()})
    with open(os.path.join(folder, args.spec + ".cu")) as f:
        roles = warp_roles(f.read(), args.spec)
    child = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--run-once", "--rkc",
         args.rkc, "--spec", args.spec, "--decode", args.decode, "--folder",
         folder], capture_output=True, text=True)
    if child.returncode:
        sys.exit("the decode run failed:\n" + child.stderr[-2000:])
    stamps = parse_stamps(child.stdout)
    if not stamps:
        sys.exit("no rkc-profile-decode lines in the run's output:\n" +
                 child.stdout[-2000:])
    print("%s decode at N,H = %s: cycles of the timed call's last token, "
          "mean over %d printing blocks" % (args.spec, args.decode,
                                            len({s[0] for s in stamps})))
    print(table(roles, summarize(stamps)))


if __name__ == "__main__":
    main()
