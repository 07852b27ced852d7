#!/usr/bin/env python3
"""Where one generated kernel's time goes, from Nsight Compute's counters
(GPU machine with `ncu`): builds a spec's kernels (bf16 inputs as
bench/benchmark.py draws them, d = 128), runs one prefill or decode under
`ncu --set full` (one launch, after one warm-up), keeps the report's details
page and its SASS export, and prints the kernel's summary, its stall reasons
and opcodes, and a table of its phases, the instructions between two
barriers: in a generated kernel, its chunk ops in order
(bench/sass_profile.py).

  python3 test/gpu/kernel_profile.py --rkc build/bin/rkc --spec kda --kernel prep
  python3 test/gpu/kernel_profile.py --rkc build/bin/rkc --spec gdn2 --kernel decode \\
      --decode 64,32 --out /tmp/gdn2-decode

--kernel: prep (the split prefill's prep kernel), scan (its scan: the
prefill kernel), out (the out kernel of --out-phase 1) or decode; the kernels for 16-bit outputs are the ones run.
ncu runs with --clock-control none (the clocks as benchmarks see them).
--lineinfo builds with nvcc's -lineinfo and also exports the source page with
CUDA lines beside the SASS (source.csv), so that a phase can be traced to the
generated code's ops (whose comments name them); an export ncu refuses is
reported and skipped.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import sass_profile  # noqa: E402

KERNELS = {"prep": "prep_kernel_tc", "scan": "prefill_kernel_tc",
           "out": "out_kernel_tc", "decode": "decode_kernel"}
SUMMARY = ("Duration", "Registers Per Thread", "Theoretical Occupancy",
           "Achieved Occupancy", "Issue Slots Busy", "DRAM Throughput",
           "Warp Cycles Per Issued Instruction", "Dynamic Shared Memory")


def run_once(args):
    """The profiled process: the kernels built beforehand, one call to warm
    up and one that ncu records (--launch-skip 1); the inputs compare.py
    draws for the same shape."""
    import torch
    from compare import one_call
    call = one_call(args.folder, args.spec, args.shape, args.decode)
    for _ in range(2):
        call()
    torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rkc", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--kernel", choices=sorted(KERNELS), default="prep")
    parser.add_argument("--shape", default="1,8192,32", help="B,T,H (prefill)")
    parser.add_argument("--decode", metavar="N,H",
                        help="N sequences, H heads, one token (--kernel decode)")
    parser.add_argument("--compile-args", default="",
                        help="more rkc compile options, one string")
    parser.add_argument("--out", default="/tmp/rkc-profile",
                        help="folder for the report's exports")
    parser.add_argument("--ncu", default=shutil.which("ncu") or "/usr/local/cuda/bin/ncu")
    parser.add_argument("--min-share", type=float, default=0.5,
                        help="leave out phases under this percent of both "
                             "instructions and samples")
    parser.add_argument("--lineinfo", action="store_true",
                        help="build with -lineinfo; export CUDA lines with the "
                             "SASS (source.csv)")
    parser.add_argument("--run-once", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if (args.kernel == "decode") != bool(args.decode):
        parser.error("--kernel decode goes with --decode N,H (and only it)")
    if args.run_once:
        return run_once(args)
    if not os.access(args.ncu, os.X_OK):
        sys.exit("ncu not found (%s): pass --ncu" % args.ncu)

    from check import build
    os.makedirs(args.out, exist_ok=True)
    print("building %s ..." % args.spec, flush=True)
    env = None
    if args.lineinfo:
        flags = os.environ.get("RKC_NVCC_FLAGS", "")
        env = {"RKC_NVCC_FLAGS": (flags + " -lineinfo").strip()}
    folder = build(args.rkc, args.spec, 128, os.path.join(args.out, "build"),
                   args.compile_args.split(), env)
    report = os.path.join(args.out, "%s-%s" % (args.spec, args.kernel))
    me = [sys.executable, os.path.abspath(__file__), "--run-once", "--folder",
          folder, "--rkc", args.rkc, "--spec", args.spec, "--kernel",
          args.kernel, "--shape", args.shape] + \
         (["--decode", args.decode] if args.decode else [])
    print("profiling rkc_%s_%s ..." % (args.spec, KERNELS[args.kernel]), flush=True)
    subprocess.run([args.ncu, "--clock-control", "none", "--set", "full",
                    "--import-source", "yes" if args.lineinfo else "no", "-k",
                    "regex:%s_%s" % (args.spec, KERNELS[args.kernel]),
                    "--launch-skip", "1", "--launch-count", "1", "-o", report,
                    "-f"] + me, check=True, stdout=subprocess.DEVNULL)
    exports = {"details": ["--page", "details"],
               "sass.csv": ["--page", "source", "--csv", "--print-source", "sass"]}
    if args.lineinfo:
        exports["source.csv"] = ["--page", "source", "--csv", "--print-source",
                                 "cuda,sass"]
    for suffix, page in exports.items():
        with open("%s.%s" % (report, suffix), "w") as f:
            done = subprocess.run([args.ncu, "-i", report + ".ncu-rep"] + page,
                                  stdout=f, stderr=subprocess.PIPE, text=True)
        if done.returncode and suffix == "source.csv":
            print("ncu did not export %s (%s): %s" % (
                suffix, " ".join(page), done.stderr.strip()[-300:]))
        elif done.returncode:
            sys.exit("ncu -i %s.ncu-rep %s failed: %s" % (
                report, " ".join(page), done.stderr.strip()[-300:]))
    with open(report + ".details") as f:
        for line in f:
            if line.strip().startswith(SUMMARY):
                print(" ".join(line.split()))
    rows = sass_profile.read_source_csv(report + ".sass.csv")
    print(sass_profile.report(rows, args.min_share))
    print("exports: %s.{%s,ncu-rep}" % (report, ",".join(exports)))


if __name__ == "__main__":
    main()
