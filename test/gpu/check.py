#!/usr/bin/env python3
"""GPU check of RKC's generated kernels against the float64 interpreter.

Runs where a GPU, nvcc, a C compiler and PyTorch are (no LLVM needed: `rkc`
is the statically linked binary). For every example spec and option it
compiles the kernels with `rkc compile`, builds the launcher and runtime into
a shared library, draws inputs with `rkc run --random` (which also writes the
interpreter's float64 outputs on the exact, rounded inputs), runs the prefill
kernel on the GPU with outputs poisoned by NaN (on the inputs as drawn, and
again on views of them with rows one element longer: the worse error of the
two shows), compares, then checks the
decode kernel over the last 16 tokens from the prefill state, and a decode
step with state_indices (slots in another order, a padding entry) against
plain calls. Each prefill runs again three times on the same inputs and must
give the same bits (a race shows there before the tolerance notices it);
with --repeat-shape 1,8192,32 so does every spec's prefill at a benchmark's
size, five times (races land far more often with every SM busy).
The cases include gates down to -40 a token (`gates=40`: the
factored Grams' exact path); --dtypes takes f32, bf16 and f16. Prints a
table last; exits 1 if any row is out of tolerance.

  python3 test/gpu/check.py --rkc .devbin/rkc [--specs kda,eda] [--quick]
"""
import argparse
import concurrent.futures as futures
import json
import os
import shutil
import subprocess
import sys
import time

import torch
from safetensors.torch import load_file

SPECS = ["linear_attention", "deltanet", "gdn", "kda", "gdn2", "qed", "eda",
         "deltaproduct", "comba", "dplr", "kda_prologue"]
TOLERANCE = {"f32": 1e-5, "bf16": 5e-3, "f16": 5e-3}
REPEATS = 3  # prefill calls again on the same inputs, to match bit for bit


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from rkc_torch._library import Library  # noqa: E402  (the ctypes binding)


class Kernels(Library):
    """The generated library of one spec, called with inputs by name."""

    def call(self, which, inputs, o, initial=None, final=None,
             cu_seqlens=None, cu_host=None, state_indices=None):
        ordered = [inputs[i["name"]] for i in self.manifest["inputs"]]
        super().call(which, torch.cuda.current_stream().cuda_stream, ordered,
                     o, initial, final, cu_seqlens, cu_host,
                     state_indices=state_indices)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def build(rkc, spec, d, work, compile_args=(), env=None):
    folder = os.path.join(work, "%s_d%d" % (spec, d))
    run([rkc, "compile", "examples/specs/%s.mlir" % spec, "-o", folder,
         "--dk", str(d), "--dv", str(d)] + list(compile_args),
        env=dict(os.environ, **(env or {})))
    run(["cc", "-shared", "-fPIC", "-O2", "-std=c11", "-I", folder, "-o",
         os.path.join(folder, "lib%s.so" % spec),
         os.path.join(folder, "%s_launch.c" % spec),
         os.path.join(folder, "rkc", "runtime.c"), "-ldl", "-lpthread"])
    return folder


def reference(rkc, spec, shape, dtype, seed, folder, tag):
    inputs = os.path.join(folder, tag + ".in.safetensors")
    out = os.path.join(folder, tag + ".ref.safetensors")
    run([rkc, "run", "examples/specs/%s.mlir" % spec, "--random", shape,
         "--random-dtype", dtype, "--seed", str(seed), "--save-inputs",
         inputs, "--out", out])
    return inputs, out


def rel(x, ref):
    x = x.double().cpu()
    ref = ref.double().cpu()
    if not torch.isfinite(x).all():
        return float("inf")
    return ((x - ref).norm() / ref.norm().clamp_min(1e-300)).item()


def padded(x):
    """x's values in a view of a tensor whose rows are one element longer."""
    if x.dim() < 4:
        return x
    big = torch.zeros(*x.shape[:-1], x.shape[-1] + 1, dtype=x.dtype,
                      device=x.device)
    big[..., :x.shape[-1]] = x
    return big[..., :x.shape[-1]]


def check_case(kernels, inputs_path, ref_path, varlen):
    inputs = {k: v.cuda() for k, v in load_file(inputs_path).items()}
    ref = load_file(ref_path)
    cu = inputs.pop("cu_seqlens", None)
    initial = inputs.pop("initial_state").float().contiguous()
    first = inputs[kernels.manifest["inputs"][0]["name"]]
    o = torch.full(ref["o"].shape, float("nan"), device="cuda",
                   dtype=first.dtype)
    final = torch.full(ref["final_state"].shape, float("nan"), device="cuda")
    kernels.call("prefill", inputs, o, initial, final, cu,
                 cu.cpu() if cu is not None else None)
    torch.cuda.synchronize()
    errors = [rel(o, ref["o"]), rel(final, ref["final_state"])]
    # The kernels use no atomics: the same call again gives the same bits.
    # A difference is a race between the warps or blocks of a kernel, which
    # the tolerance alone may let through where it lands rarely.
    diff = again(lambda o2, f2: kernels.call(
        "prefill", inputs, o2, initial, f2, cu,
        cu.cpu() if cu is not None else None), o, final, REPEATS)
    if diff:
        raise RuntimeError("the same prefill call gave other bits (%.2e "
                           "apart): a race" % diff)
    # Again on views whose rows are one element longer: strides that no
    # 16-byte copy can take (the split scan then reads the raw input rows
    # the prep kernel handed over, not the inputs). The worse error shows.
    o2, final2 = torch.full_like(o, float("nan")), torch.full_like(final, float("nan"))
    kernels.call("prefill", {k: padded(v) for k, v in inputs.items()}, o2,
                 initial, final2, cu, cu.cpu() if cu is not None else None)
    torch.cuda.synchronize()
    errors = [max(errors[0], rel(o2, ref["o"])),
              max(errors[1], rel(final2, ref["final_state"]))]
    # Decode: the same tokens one at a time from the given state (batch rows).
    if not varlen:
        T = o.shape[1]
        tail = min(16, T)
        state = initial.clone()
        # Prefill all but the last `tail` tokens, then decode them one by one.
        head = T - tail
        if head > 0:
            cut = token_span(kernels, inputs, 0, head)
            o_head = torch.empty_like(o[:, :head])
            kernels.call("prefill", cut, o_head, initial, state)
        before = state.clone()  # the state the first decoded step starts from
        o_tail = torch.full_like(o[:, head:], float("nan"))
        for t in range(head, T):
            step = token_span(kernels, inputs, t, t + 1)
            kernels.call("decode", step, o_tail[:, t - head:t - head + 1],
                         state, state)
        torch.cuda.synchronize()
        errors += [rel(o_tail, ref["o"][:, head:]),
                   rel(state, ref["final_state"])]
        # The first step again on views whose rows are one element longer:
        # rows off a vector's alignment, whose elements a lane loads one by
        # one. The same arithmetic as the aligned step above, so the same
        # result.
        step = token_span(kernels, inputs, head, head + 1)
        outs = []
        for views in (step, {k: padded(v) for k, v in step.items()}):
            o1 = torch.full_like(o[:, head:head + 1], float("nan"))
            s1 = torch.full_like(initial, float("nan"))
            kernels.call("decode", views, o1, before, s1)
            outs.append((o1, s1))
        torch.cuda.synchronize()
        errors[-2] = max(errors[-2], rel(outs[1][0], outs[0][0]))
        errors[-1] = max(errors[-1], rel(outs[1][1], outs[0][1]))
        if o.shape[0] >= 2:
            check_state_indices(kernels, inputs, initial, T - 1)
    return errors


def again(call, o, final, times):
    """`call(o, final)` `times` times more into fresh NaN-filled buffers: the
    largest relative difference from `o` and `final` (0: the same bits
    every time)."""
    worst = 0.0
    for _ in range(times):
        o2 = torch.full_like(o, float("nan"))
        f2 = torch.full_like(final, float("nan"))
        call(o2, f2)
        torch.cuda.synchronize()
        if not (torch.equal(o2, o) and torch.equal(f2, final)):
            worst = max(worst, rel(o2, o), rel(f2, final), 1e-300)
    return worst


def repeated(folder, spec, shape, times):
    """The prefill of `folder`'s kernels (d = 128) on bench/benchmark.py's
    bf16 inputs at `shape` (B,T,H), `times` times: the largest relative
    difference of o and the final state from the first call's (0 where
    every call gave the same bits)."""
    from compare import D, cases  # (compare imports this module's Kernels)
    _, x, initial, B, T, H = cases(argparse.Namespace(
        spec=spec, shape=shape, decode=None))[0]
    kernels = Kernels(folder, spec)
    o = torch.full((B, T, H, D), float("nan"), device="cuda",
                   dtype=torch.bfloat16)
    final = torch.full((B, H, D, D), float("nan"), device="cuda")
    kernels.call("prefill", x, o, initial, final)
    torch.cuda.synchronize()
    if not (torch.isfinite(o).all() and torch.isfinite(final).all()):
        return float("inf")  # (not every element written)
    return again(lambda o2, f2: kernels.call("prefill", x, o2, initial, f2),
                 o, final, times - 1)


def check_state_indices(kernels, inputs, initial, t):
    """A decode step of token t with state_indices: sequence b takes slot
    N - 1 - b of the state pool, the last sequence is a padding entry (-1).
    Each sequence must get what a plain call on its own slot's state gives
    (the same arithmetic: no tolerance but rounding's), the padding entry's
    o and the slot no sequence takes must stay as they were; the same again
    with the pool updated in place, and with states off 16-byte alignment
    (bit for bit)."""
    N = initial.shape[0]
    full = token_span(kernels, inputs, t, t + 1, contiguous=True)
    lead = token_span(kernels, inputs, t, t + 1, N - 1, contiguous=True)
    first = inputs[kernels.manifest["inputs"][0]["name"]]
    shape = (N, 1, initial.shape[1], initial.shape[3])
    indices = torch.arange(N - 1, -1, -1, dtype=torch.int32, device="cuda")
    indices[N - 1] = -1
    pool = initial.clone()
    final = initial.clone()
    o = torch.full(shape, float("nan"), device="cuda", dtype=first.dtype)
    kernels.call("decode", full, o, pool, final, state_indices=indices)
    gathered = pool[indices[:N - 1].long()].contiguous()
    o_plain = torch.full((N - 1,) + shape[1:], float("nan"), device="cuda",
                         dtype=first.dtype)
    final_plain = torch.empty_like(gathered)
    kernels.call("decode", lead, o_plain, gathered, final_plain)
    torch.cuda.synchronize()
    worst = max(rel(o[:N - 1], o_plain.double().cpu()),
                rel(final[indices[:N - 1].long()], final_plain.double().cpu()))
    if worst > 1e-6:
        raise RuntimeError("state_indices: %.2e from the plain calls" % worst)
    if not torch.isnan(o[N - 1]).all():
        raise RuntimeError("state_indices: the padding entry wrote o")
    if not torch.equal(final[0], pool[0]):
        raise RuntimeError("state_indices: the slot no sequence takes changed")
    # The pool updated in place, as a server keeps it.
    inplace = initial.clone()
    o2 = torch.full_like(o, float("nan"))
    kernels.call("decode", full, o2, inplace, inplace, state_indices=indices)
    torch.cuda.synchronize()
    if not (torch.equal(o2[:N - 1], o[:N - 1]) and torch.equal(inplace, final)):
        raise RuntimeError("state_indices: in place differs from apart")
    # States 4 bytes off 16-byte alignment (a view into a larger buffer).
    buffer = torch.empty(initial.numel() + 1, device="cuda")
    shifted = buffer[1:].view_as(initial)
    shifted.copy_(initial)
    o3 = torch.full_like(o, float("nan"))
    final3 = torch.empty_like(initial)
    kernels.call("decode", full, o3, shifted, final3, state_indices=indices)
    torch.cuda.synchronize()
    if not (torch.equal(o3[:N - 1], o[:N - 1]) and
            torch.equal(final3[indices[:N - 1].long()],
                        final[indices[:N - 1].long()])):
        raise RuntimeError("state_indices: a misaligned state differs")


def token_span(kernels, inputs, t0, t1, batch=None, contiguous=False):
    """The inputs of tokens [t0, t1) (a token's rows for sub-step inputs),
    of the first `batch` sequences; inputs without a token axis as they
    are."""
    rows = kernels.manifest["substep_rows"]
    span = {}
    for (k, v), rate in zip(inputs.items(), rates(kernels, inputs)):
        if v.dim() >= 3:
            r = rows if rate == "substep" else 1
            v = v[:batch, t0 * r:t1 * r]
            v = v.contiguous() if contiguous else v
        span[k] = v
    return span


def rates(kernels, inputs):
    by_name = {i["name"]: i["rate"] for i in kernels.manifest["inputs"]}
    return [by_name[k] for k in inputs]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rkc", required=True)
    parser.add_argument("--work", default="/tmp/rkc-gpu")
    parser.add_argument("--specs", default=",".join(SPECS))
    parser.add_argument("--dims", default="64,128")
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--quick", action="store_true",
                        help="one small case a spec")
    parser.add_argument("--repeat-shape", default="",
                        help="B,T,H (e.g. 1,8192,32) of a prefill run "
                             "--repeat-times times bit for bit on every spec "
                             "built at d 128 (bf16, bench/benchmark.py's "
                             "inputs; default: none)")
    parser.add_argument("--repeat-times", type=int, default=5)
    parser.add_argument("--compile-args", default="",
                        help="extra rkc compile options, e.g. '--split-scan 1'")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    specs = args.specs.split(",")
    dims = [int(d) for d in args.dims.split(",")]
    start = time.time()
    with futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        folders = dict(zip([(s, d) for s in specs for d in dims],
                           pool.map(lambda sd: build(args.rkc, sd[0], sd[1],
                                                     args.work,
                                                     args.compile_args.split()),
                                    [(s, d) for s in specs for d in dims])))
    print("compiled %d kernels in %.1f s" % (len(folders), time.time() - start),
          flush=True)
    if shutil.which("cuobjdump"):  # the sm_90a code in every fatbin
        for (spec, d), folder in sorted(folders.items()):
            elf = run(["cuobjdump", "--list-elf",
                       os.path.join(folder, spec + ".fatbin")]).strip()
            print("%-16s d=%-3d %s" % (spec, d, elf), flush=True)

    cases = [("B=%d,T=%d" % (b, t), False)
             for t in (1, 63, 64, 65, 1000, 4096) for b in (1, 3)]
    cases += [("seqlens=37:1000:5:300", True), ("B=2,T=200,HV=4", False)]
    # Log-decays down to -40 a token: a chunk's decays pass what the
    # kernels' factored Grams take, so their exact paths run.
    strong = ("B=2,T=100,gates=40", False)
    cases.append(strong)
    if args.quick:
        cases = [("B=2,T=100", False), ("seqlens=37:100:5", True), strong]
    jobs = []
    for (spec, d), folder in folders.items():
        for dtype in args.dtypes.split(","):
            for i, (shape, varlen) in enumerate(cases):
                full = "%s,H=2,dk=%d,dv=%d" % (shape, d, d)
                jobs.append((spec, d, dtype, shape, varlen, folder,
                             "%s_%d" % (dtype, i), full))
    start = time.time()
    with futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        refs = list(pool.map(
            lambda j: reference(args.rkc, j[0], j[7], j[2], 17, j[5], j[6]),
            jobs))
    print("interpreter references in %.1f s" % (time.time() - start),
          flush=True)

    loaded = {}
    rows, failures = [], 0
    for job, (inputs, ref) in zip(jobs, refs):
        spec, d, dtype, shape, varlen, folder = job[:6]
        key = (spec, d)
        if key not in loaded:
            loaded[key] = Kernels(folder, spec)
        try:
            errors = check_case(loaded[key], inputs, ref, varlen)
            bound = TOLERANCE[dtype]
            ok = all(e <= bound for e in errors)
        except Exception as e:  # a launch error is a failed row, not a crash
            errors, ok = [], False
            print("%s %s %s: %s" % (spec, dtype, shape, e), flush=True)
        failures += not ok
        rows.append((spec, dtype, d, shape, errors, ok))

    # `rkc run --backend cuda` end to end: compile (cached), run, write.
    for spec in [s for s in specs if s in ("kda", "eda", "deltaproduct", "qed")]:
        folder = os.path.join(args.work, "cli_" + spec)
        os.makedirs(folder, exist_ok=True)
        inputs, ref = reference(args.rkc, spec,
                                "seqlens=37:300:5,H=2,HV=4,dk=128,dv=128",
                                "f32", 5, folder, "cli")
        out = os.path.join(folder, "cuda.safetensors")
        try:
            run([args.rkc, "run", "examples/specs/%s.mlir" % spec, "--inputs",
                 inputs, "--backend", "cuda", "--out", out],
                env=dict(os.environ, RKC_CACHE_DIR=os.path.join(folder, "cache")))
            got, want = load_file(out), load_file(ref)
            errors = [rel(got["o"], want["o"]),
                      rel(got["final_state"], want["final_state"])]
            ok = all(e <= TOLERANCE["f32"] for e in errors)
        except Exception as e:
            errors, ok = [], False
            print("rkc run --backend cuda %s: %s" % (spec, e), flush=True)
        failures += not ok
        rows.append((spec, "f32", 128, "rkc run --backend cuda", errors, ok))

    # At a benchmark's size (many blocks an SM, every SM busy) a race
    # between warps or blocks lands far more often than in the small cases
    # above: the prefill on the benchmark's inputs, several times, bit for
    # bit (no float64 reference: too slow there).
    if args.repeat_shape:
        import compare  # noqa: F401  (puts bench/ on the path)
        from benchmark import SPECS as DRAWN  # the specs it draws inputs for
        for spec in [s for s in specs if (s, 128) in folders and s in DRAWN]:
            try:
                diff = repeated(folders[(spec, 128)], spec, args.repeat_shape,
                                args.repeat_times)
                errors, ok = [diff, 0.0], diff == 0.0
            except Exception as e:
                errors, ok = [], False
                print("%s repeated at %s: %s" % (spec, args.repeat_shape, e),
                      flush=True)
            failures += not ok
            rows.append((spec, "bf16", 128, "x%d, B,T,H=%s" % (
                args.repeat_times, args.repeat_shape), errors, ok))

    print("\nGPU: %s, commit %s" % (torch.cuda.get_device_name(),
                                   os.environ.get("RKC_COMMIT", "?")))
    print("%-16s %-5s %4s %-24s %10s %10s %10s %10s %s" % (
        "spec", "dtype", "d", "case", "o", "state", "decode o", "dec state",
        "ok"))
    for spec, dtype, d, shape, errors, ok in rows:
        cells = ["%10.2e" % e for e in errors] + ["%10s" % "-"] * (4 - len(errors))
        print("%-16s %-5s %4d %-24s %s %s" % (spec, dtype, d, shape,
                                              " ".join(cells),
                                              "ok" if ok else "FAIL"))
    print("\n%d passed, %d failed" % (len(rows) - failures, failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
