#!/usr/bin/env python3
"""GPU test of the PyTorch ops (python/rkc_torch): against
flash-linear-attention's ops (KDA, GDN: same calls, drop-in) and against the
float64 interpreter (EDA, QED and the rest), at bf16 tolerance, with varlen
and initial states; CUDA graph replay against eager; torch.compile with
fullgraph=True. Prints a table last; exit 1 on any failure.

  python3 test/gpu/torch_ops.py --rkc build/bin/rkc --fla PATH_TO_A_COPY_OF_FLA
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

import torch
from safetensors.torch import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BOUND = 5e-3  # bf16 (MATH.md)


def rel(x, ref):
    x, ref = x.double().cpu(), ref.double().cpu()
    if not torch.isfinite(x).all():
        return float("inf")
    return ((x - ref).norm() / ref.norm()).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rkc", required=True)
    parser.add_argument("--fla", required=True)
    args = parser.parse_args()
    os.environ["RKC"] = os.path.abspath(args.rkc)
    os.environ.setdefault("RKC_CACHE_DIR", tempfile.mkdtemp(prefix="rkc-torch-"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.abspath(args.fla))
    import rkc_torch
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule as fla_gdn
    from fla.ops.kda import chunk_kda as fla_kda

    rows = []

    def record(name, errors, ok=None):
        ok = all(e <= BOUND for e in errors) if ok is None else ok
        rows.append((name, errors, ok))
        print(name, errors, "ok" if ok else "FAIL", flush=True)

    torch.manual_seed(0)
    dev = "cuda"

    def make(B, T, H, D, per_channel, normalise=True):
        q = torch.randn(B, T, H, D, device=dev)
        k = torch.randn(B, T, H, D, device=dev)
        if normalise:
            q = torch.nn.functional.normalize(q, dim=-1)
            k = torch.nn.functional.normalize(k, dim=-1)
        v = torch.randn(B, T, H, D, device=dev)
        gshape = (B, T, H, D) if per_channel else (B, T, H)
        g = torch.nn.functional.logsigmoid(torch.randn(gshape, device=dev)).clamp(-5, 0)
        beta = torch.rand(B, T, H, device=dev)
        return (q.bfloat16(), k.bfloat16(), v.bfloat16(), g.float(),
                beta.bfloat16())

    # Drop-in against fla: the same calls, keyword for keyword.
    for name, ours, theirs, per_channel in (
            ("chunk_kda", rkc_torch.chunk_kda, fla_kda, True),
            ("chunk_gated_delta_rule", rkc_torch.chunk_gated_delta_rule,
             fla_gdn, False)):
        q, k, v, g, beta = make(2, 300, 4, 128, per_channel)
        h0 = torch.randn(2, 4, 128, 128, device=dev)
        a = ours(q, k, v, g, beta, initial_state=h0, output_final_state=True)
        b = theirs(q, k, v, g, beta, initial_state=h0, output_final_state=True)
        record("%s vs fla, B=2 T=300, initial state" % name,
               [rel(a[0], b[0]), rel(a[1], b[1])])
        # varlen (4 sequences, one shorter than a chunk), L2 norm in kernel.
        q, k, v, g, beta = make(1, 640, 4, 128, per_channel, normalise=False)
        cu = torch.tensor([0, 37, 300, 305, 640], device=dev)
        h0 = torch.randn(4, 4, 128, 128, device=dev)
        a = ours(q, k, v, g, beta, initial_state=h0, output_final_state=True,
                 use_qk_l2norm_in_kernel=True, cu_seqlens=cu)
        b = theirs(q, k, v, g, beta, initial_state=h0, output_final_state=True,
                   use_qk_l2norm_in_kernel=True, cu_seqlens=cu)
        record("%s vs fla, varlen + use_qk_l2norm_in_kernel" % name,
               [rel(a[0], b[0]), rel(a[1], b[1])])

    # Against the interpreter, on the exact bf16 inputs.
    calls = {
        "eda": rkc_torch.chunk_eda, "qed": rkc_torch.chunk_qed,
        "gdn2": rkc_torch.chunk_gdn2, "deltanet": rkc_torch.chunk_delta_rule,
        "linear_attention": rkc_torch.chunk_linear_attention,
        "comba": rkc_torch.chunk_comba, "dplr": rkc_torch.chunk_dplr,
        "deltaproduct": rkc_torch.chunk_deltaproduct}
    work = tempfile.mkdtemp(prefix="rkc-torch-ref-")
    for spec, fn in calls.items():
        for shape in ("B=2,T=200,H=2,dk=64,dv=64",
                      "seqlens=37:300:5:100,H=2,dk=64,dv=64"):
            inputs = os.path.join(work, spec + ".in.safetensors")
            ref = os.path.join(work, spec + ".ref.safetensors")
            subprocess.run([args.rkc, "run", os.path.join(ROOT, "examples",
                                                           "specs", spec + ".mlir"),
                            "--random", shape, "--random-dtype", "bf16",
                            "--save-inputs", inputs, "--out", ref],
                           check=True, capture_output=True)
            x = {n: t.cuda() for n, t in load_file(inputs).items()}
            want = load_file(ref)
            h0 = x.pop("initial_state").float()
            cu = x.pop("cu_seqlens", None)
            o, state = fn(**x, initial_state=h0, output_final_state=True,
                          cu_seqlens=cu)
            record("%s vs interpreter, %s" % (spec, shape.split(",H")[0]),
                   [rel(o, want["o"]), rel(state, want["final_state"])])

    # CUDA graphs: capture once warmed up, replay on new inputs.
    q, k, v, g, beta = make(2, 256, 2, 64, True)
    e = torch.nn.functional.normalize(torch.randn_like(q.float()), dim=-1).bfloat16()
    gamma = torch.rand_like(beta.float()).bfloat16()
    tensors = [q, k, v, g, beta, e, gamma]
    rkc_torch.chunk_eda(*tensors)  # warm-up: compile and load the module
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        rkc_torch.chunk_eda(*tensors)
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            captured, _ = rkc_torch.chunk_eda(*tensors)
    for t in tensors[:3]:
        t.copy_(torch.randn_like(t.float()).to(t.dtype) * 0.5)
    graph.replay()
    torch.cuda.synchronize()
    eager, _ = rkc_torch.chunk_eda(*tensors)
    record("chunk_eda: CUDA graph replay vs eager", [rel(captured, eager)],
           ok=rel(captured, eager) == 0.0)

    # The workspace pool keeps its memory from one synchronised call to the
    # next (no mapping again) and hands it back on release_memory.
    from rkc_torch._library import loaded_libraries
    libcuda = ctypes.CDLL("libcuda.so.1")

    def reserved():  # CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT of RKC's pools
        total = 0
        for pool in {lib.memory_pool() for lib in loaded_libraries()} - {None}:
            value = ctypes.c_uint64(0)
            if libcuda.cuMemPoolGetAttribute(ctypes.c_void_p(pool), 5,
                                             ctypes.byref(value)):
                return -1
            total += value.value
        return total

    held = []
    for _ in range(2):
        rkc_torch.chunk_eda(*tensors)
        torch.cuda.synchronize()
        held.append(reserved())
    rkc_torch.release_memory()
    held.append(reserved())
    record("workspace pool: kept across synchronised calls, released "
           "(%d, %d, %d bytes)" % tuple(held), [],
           ok=held[0] > 0 and held[1] == held[0] and held[2] == 0)

    # torch.compile with fullgraph=True.
    def layer(q, k, v, g, beta, e, gamma):
        o, _ = rkc_torch.chunk_eda(q, k, v, g, beta, e, gamma)
        return o.float() * 2.0

    compiled = torch.compile(layer, fullgraph=True)
    got, want = compiled(*tensors), layer(*tensors)
    record("chunk_eda: torch.compile(fullgraph=True) vs eager",
           [rel(got, want)], ok=rel(got, want) == 0.0)

    # Clear errors.
    errors = 0
    for bad, what in ((lambda: rkc_torch.chunk_eda(*[t.cpu() for t in tensors]),
                       "CPU tensors"),
                      (lambda: rkc_torch.chunk_eda(q, k, v, g, beta, e,
                                                   gamma[:, :10]),
                       "misshaped gamma"),
                      (lambda: rkc_torch.chunk_kda(q, k, v, g, beta,
                                                   safe_gate=True),
                       "unsupported flag")):
        try:
            bad()
            print("no error for", what)
            errors += 1
        except (ValueError, NotImplementedError) as exc:
            print("%s -> %s: %s" % (what, type(exc).__name__, exc))
    record("bad inputs raise ValueError / NotImplementedError", [],
           ok=errors == 0)

    print("\nGPU: %s, commit %s" % (torch.cuda.get_device_name(),
                                   os.environ.get("RKC_COMMIT", "?")))
    print("%-62s %-22s %s" % ("test", "errors (o, state)", "ok"))
    for name, errs, ok in rows:
        print("%-62s %-22s %s" % (name, " ".join("%.2e" % e for e in errs),
                                  "ok" if ok else "FAIL"))
    failed = sum(not ok for _, _, ok in rows)
    print("\n%d passed, %d failed" % (len(rows) - failed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
