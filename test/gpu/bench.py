#!/usr/bin/env python3
"""Side-by-side timing of RKC's generated prefill kernels and
flash-linear-attention's, in one process on the same inputs (bf16 q, k, v,
beta; fp32 gates): correctness against fla first, then CUDA-event medians
(triton.testing.do_bench). fla is imported from --fla (a copy of its fla/
folder's parent), never vendored.

  python3 test/gpu/bench.py --rkc .devbin/rkc --fla .fla
"""
import argparse
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import Kernels, build, rel  # noqa: E402

SHAPES = [(1, 8192, 32, 128), (4, 4096, 16, 128), (1, 32768, 16, 128)]


def inputs_for(spec, B, T, H, D, device="cuda"):
    torch.manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn(B, T, H, D, device=device), dim=-1)
    k = torch.nn.functional.normalize(torch.randn(B, T, H, D, device=device), dim=-1)
    v = torch.randn(B, T, H, D, device=device)
    beta = torch.rand(B, T, H, device=device)
    gshape = (B, T, H, D) if spec == "kda" else (B, T, H)
    g = torch.nn.functional.logsigmoid(torch.randn(gshape, device=device)).clamp(-5, 0)
    return {"q": q.bfloat16(), "k": k.bfloat16(), "v": v.bfloat16(),
            "beta": beta.bfloat16(), "g": g.float()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rkc", required=True)
    parser.add_argument("--fla", required=True)
    parser.add_argument("--work", default="/tmp/rkc-bench")
    parser.add_argument("--shapes", default="0,1,2")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.fla))
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    from fla.ops.kda import chunk_kda

    fla_ops = {"kda": chunk_kda, "gdn": chunk_gated_delta_rule}
    rows = []
    for spec in ("kda", "gdn"):
        folder = build(args.rkc, spec, 128, args.work)
        kernels = Kernels(folder, spec)
        for index in [int(i) for i in args.shapes.split(",")]:
            B, T, H, D = SHAPES[index]
            x = inputs_for(spec, B, T, H, D)
            o = torch.empty(B, T, H, D, device="cuda", dtype=torch.bfloat16)
            final = torch.empty(B, H, D, D, device="cuda")

            def rkc():
                kernels.call("prefill", x, o, None, final)

            def fla():
                return fla_ops[spec](x["q"], x["k"], x["v"], x["g"], x["beta"],
                                     output_final_state=True)

            rkc()
            ref_o, ref_state = fla()
            torch.cuda.synchronize()
            err = rel(o, ref_o.double().cpu())
            err_state = rel(final, ref_state.double().cpu())
            t_rkc = triton.testing.do_bench(rkc, warmup=5, rep=50,
                                            return_mode="median")
            t_fla = triton.testing.do_bench(fla, warmup=25, rep=200,
                                            return_mode="median")
            rows.append((spec, (B, T, H, D), t_rkc, t_fla, err, err_state))
            print(rows[-1], flush=True)

    print("\nGPU: %s, commit %s" % (torch.cuda.get_device_name(),
                                   os.environ.get("RKC_COMMIT", "?")))
    print("%-5s %-20s %10s %10s %9s %10s %10s" % (
        "spec", "B,T,H,D", "rkc ms", "fla ms", "fla/rkc", "o vs fla",
        "S vs fla"))
    for spec, shape, t_rkc, t_fla, err, err_state in rows:
        print("%-5s %-20s %10.3f %10.3f %9.3f %10.2e %10.2e" % (
            spec, ",".join(map(str, shape)), t_rkc, t_fla, t_fla / t_rkc, err,
            err_state))


if __name__ == "__main__":
    main()
