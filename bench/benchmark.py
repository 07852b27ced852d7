#!/usr/bin/env python3
"""Side-by-side benchmark of RKC's kernels and flash-linear-attention's.

For every example spec it draws realistic inputs (bf16 q, k, v and strengths,
fp32 log-space gates, q/k/e L2-normalised, a fresh seed a row), runs RKC's
prefill kernel through rkc_torch and the matching fla kernel in one process
on the same inputs, checks that the two agree (relative Frobenius error of o
and of the final state within 5e-3) and only then times both with CUDA events
(warm-up, L2 flushed before every repetition, median with p20/p80). Then a
sweep over T (kda, eda) and the one-token decode kernels, called through
rkc_torch's ctypes binding: kda and gdn against fla's fused_recurrent
kernels, the other specs checked against one float64 step in torch.

EDA and QED have no fla kernel: they are timed against fla's
chunk_dplr_delta_rule, per MATH.md's sub-step table (EDA over the doubled
sequence, an erase then a delta sub-step a token; QED over T with its erase
vector computed in torch), and RKC's outputs are checked against that route.

It writes --out (the machine, the measured device copy bandwidth, the tables,
an acceptance table against the performance targets, two SVG plots beside it) and
prints the report on stdout last; progress goes to stderr, a line a row.

  python3 bench/benchmark.py --rkc build/bin/rkc --fla PATH_TO_FLA --out BENCHMARKS.md
  python3 bench/benchmark.py --rkc build/bin/rkc --fla PATH_TO_FLA --quick --specs kda,eda

--fla is the folder holding a copy of flash-linear-attention's fla/ package:
it is imported from there, never vendored. --quick keeps the first prefill
shape, the T sweep up to 8192 and the first decode shape.
"""
import argparse
import datetime
import gc
import importlib
import math
import os
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SPECS = ["kda", "gdn", "gdn2", "qed", "eda", "deltanet", "linear_attention",
         "comba", "dplr", "deltaproduct"]
PREFILL_SHAPES = [(1, 8192, 32, 128), (4, 4096, 16, 128), (1, 32768, 16, 128)]
SWEEP_SPECS = ["kda", "eda"]
SWEEP_T = [2048, 4096, 8192, 16384, 32768, 65536]
SWEEP_B, SWEEP_H, SWEEP_D = 1, 16, 128
DECODE_SHAPES = [(64, 32, 128), (256, 16, 128)]
BOUND = 5e-3            # MATH.md's bound for bf16 I/O (fla's own)
PRODUCT_N = 2           # DeltaProduct's sub-steps a token (fla's num_householder)
PARAMS = {"deltaproduct": ("n=%d" % PRODUCT_N,)}
BF16 = torch.bfloat16

# The performance targets: prefill speed-up over the fla row, time relative to RKC's
# own kda, share of the copy bandwidth in decode, linearity in T.
SPEEDUP_TARGETS = [("kda", 1.5), ("gdn", 1.3), ("gdn2", 1.5), ("eda", 4.0),
                   ("qed", 3.0)]
OVER_KDA_TARGETS = [("eda", 1.6), ("qed", 1.3)]
DECODE_SHARE = 0.85
LINEAR_SLACK = 1.15

rkc_torch = None        # imported in main(), once --rkc and python/ are known
rkc_library = None
FLUSH = None            # the buffer zeroed before each timed repetition


# ----------------------------------------------------------------- inputs --

class Draw:
    """Realistic random inputs (MATH.md, "Numerical acceptance")."""

    def __init__(self, seed):
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(seed)

    def normal(self, *shape):
        return torch.randn(shape, device="cuda", generator=self.gen)

    def unit(self, *shape):       # queries, keys, addresses
        return F.normalize(self.normal(*shape), dim=-1).to(BF16)

    def value(self, *shape):
        return self.normal(*shape).to(BF16)

    def gate(self, *shape):       # log-space decay, fp32
        return F.logsigmoid(self.normal(*shape)).clamp(-5.0, 0.0)

    def strength(self, *shape):   # beta, gamma, channel gates
        return torch.sigmoid(self.normal(*shape)).to(BF16)

    def pow2_gate(self, *shape):
        # A gate in (0, 1] rounded to a power of two: then gdn2's erase vector
        # a = gate ⊙ k is exact in bf16 and is the very product fla's gdn2
        # kernel forms from (gate, k), so the two sides get the same math.
        s = torch.sigmoid(self.normal(*shape))
        return torch.exp2(torch.round(torch.log2(s))).clamp(2.0 ** -6, 1.0).to(BF16)


def draw_inputs(spec, d, B, T, H, D):
    """The spec's inputs by name ([B, T, H, ...], T = 1 for decode) and the
    tensors only the fla side needs."""
    rows = T * PRODUCT_N if spec == "deltaproduct" else T
    x = {"q": d.unit(B, T, H, D), "k": d.unit(B, rows, H, D),
         "v": d.value(B, rows, H, D)}
    aux = {}
    if spec in ("kda", "eda", "gdn2", "qed", "dplr"):
        x["g"] = d.gate(B, T, H, D)
    if spec in ("gdn", "comba", "deltaproduct"):
        x["g"] = d.gate(B, T, H)
    if spec in ("kda", "gdn", "deltanet", "eda", "comba", "deltaproduct"):
        x["beta"] = d.strength(B, rows, H)
    if spec == "eda":
        x["e"], x["gamma"] = d.unit(B, T, H, D), d.strength(B, T, H)
    if spec == "gdn2":
        aux["erase_gate"] = d.pow2_gate(B, T, H, D)
        x["a"] = (aux["erase_gate"].float() * x["k"].float()).to(BF16)
        x["w"] = d.strength(B, T, H, D)
    if spec == "qed":
        x["b"], x["w"] = d.strength(B, T, H, D), d.strength(B, T, H, D)
        x["lam"] = 0.5 * d.normal(H)
    if spec == "comba":
        x["p"] = d.unit(B, T, H, D)
    if spec == "dplr":
        x["a"], x["b"] = d.unit(B, T, H, D), d.unit(B, T, H, D)
    return x, aux


def pairs(even, odd):
    """[B, T, ...] twice -> [B, 2T, ...]: row 2t from `even`, 2t+1 from `odd`."""
    return torch.stack((even, odd), dim=2).flatten(1, 2)


def eda_as_dplr(x):
    """EDA over the doubled sequence (MATH.md's sub-step table). Row 2t is
    token t's erase sub-step: decay g, write -γe, read exp(g)⊙e, nothing
    written (k' = v' = 0); row 2t+1 its delta sub-step: no decay, write -βk,
    read k, k' = βk, v' = v, read by q. fla's `a` reads, its `b` writes."""
    q, v, g = x["q"], x["v"], x["g"]
    k, e = x["k"].float(), x["e"].float()
    beta = x["beta"].float()[..., None]
    gamma = x["gamma"].float()[..., None]
    zeros = torch.zeros_like(k)
    return dict(q=pairs(q, q),
                k=pairs(zeros, beta * k).to(BF16),
                v=pairs(torch.zeros_like(v), v),
                a=pairs(torch.exp(g) * e, k).to(BF16),
                b=pairs(-gamma * e, -beta * k).to(BF16),
                gk=pairs(g, torch.zeros_like(g)))


def qed_as_dplr(x):
    """QED as one DPLR sub-step a token: a = b⊙k + λ P⊥_k(b⊙q) (raw q),
    write -k, read exp(g)⊙a, v' = w⊙v."""
    q, k, b = x["q"].float(), x["k"].float(), x["b"].float()
    bq = b * q
    a = b * k + x["lam"].float()[None, None, :, None] * (
        bq - k * (k * bq).sum(-1, keepdim=True))
    return dict(q=x["q"], k=x["k"],
                v=(x["w"].float() * x["v"].float()).to(BF16),
                a=(torch.exp(x["g"]) * a).to(BF16), b=-x["k"], gk=x["g"])


# ------------------------------------------------------------------ cases --

class Case:
    """One row's work: RKC's call, the reference's, how to compare them."""

    def __init__(self, inputs, rkc, label, fla=None, view=None,
                 reference=None, note=""):
        self.inputs = inputs          # what RKC reads (for the byte count)
        self.rkc = rkc                # () -> (o, final_state)
        self.label = label            # the reference, as the table names it
        self.fla = fla                # () -> fla's outputs, timed, or None
        self.view = view or (lambda out: (out[0], out[1]))
        self.reference = reference    # () -> (o, final_state) when no fla
        self.note = note


def fla_op(module, name):
    return getattr(importlib.import_module(module), name)


def prefill_case(spec, B, T, H, D, seed):
    x, aux = draw_inputs(spec, Draw(seed), B, T, H, D)
    q, k, v = x["q"], x["k"], x["v"]
    fs = dict(output_final_state=True)
    inputs = list(x.values())
    if spec == "kda":
        f = fla_op("fla.ops.kda", "chunk_kda")
        return Case(inputs, lambda: rkc_torch.chunk_kda(q, k, v, x["g"], x["beta"], **fs),
                    "chunk_kda", lambda: f(q, k, v, x["g"], x["beta"], **fs))
    if spec == "gdn":
        f = fla_op("fla.ops.gated_delta_rule", "chunk_gated_delta_rule")
        return Case(inputs, lambda: rkc_torch.chunk_gated_delta_rule(
            q, k, v, x["g"], x["beta"], **fs), "chunk_gated_delta_rule",
            lambda: f(q, k, v, x["g"], x["beta"], **fs))
    if spec == "gdn2":
        f = fla_op("fla.ops.gdn2", "chunk_gdn2")
        return Case(inputs, lambda: rkc_torch.chunk_gdn2(
            q, k, v, x["g"], x["a"], x["w"], **fs), "chunk_gdn2",
            lambda: f(q, k, v, x["g"], aux["erase_gate"], x["w"], **fs),
            note="a = b⊙k, b a power of two (exact in bf16)")
    if spec == "deltanet":
        f = fla_op("fla.ops.delta_rule", "chunk_delta_rule")
        return Case(inputs, lambda: rkc_torch.chunk_delta_rule(q, k, v, x["beta"], **fs),
                    "chunk_delta_rule", lambda: f(q, k, v, x["beta"], **fs))
    if spec == "linear_attention":
        f = fla_op("fla.ops.linear_attn", "chunk_linear_attn")
        # normalize=False: the plain S += k vᵀ, o = Sᵀ(scale q), no denominator.
        return Case(inputs, lambda: rkc_torch.chunk_linear_attention(q, k, v, **fs),
                    "chunk_linear_attn", lambda: f(q, k, v, normalize=False, **fs))
    if spec == "comba":
        f = fla_op("fla.ops.comba", "chunk_comba")
        return Case(inputs, lambda: rkc_torch.chunk_comba(
            q, k, v, x["p"], x["g"], x["beta"], **fs), "chunk_comba",
            lambda: f(q, k, v, x["p"], x["g"], x["beta"], **fs))
    if spec == "dplr":
        f = fla_op("fla.ops.generalized_delta_rule", "chunk_dplr_delta_rule")
        # Ours: a writes, b reads; fla's a reads, its b writes.
        return Case(inputs, lambda: rkc_torch.chunk_dplr(
            q, k, v, x["a"], x["b"], x["g"], **fs), "chunk_dplr_delta_rule",
            lambda: f(q, k, v, a=x["b"], b=x["a"], gk=x["g"], **fs))
    if spec == "deltaproduct":
        f = fla_op("fla.ops.gated_delta_product", "chunk_gated_delta_product")
        return Case(inputs, lambda: rkc_torch.chunk_deltaproduct(
            q, k, v, x["beta"], x["g"], n=PRODUCT_N, **fs),
            "chunk_gated_delta_product",
            lambda: f(q, k, v, x["g"], x["beta"], num_householder=PRODUCT_N, **fs),
            note="n = %d" % PRODUCT_N)
    if spec == "eda":
        f = fla_op("fla.ops.generalized_delta_rule", "chunk_dplr_delta_rule")
        route = eda_as_dplr(x)
        return Case(inputs, lambda: rkc_torch.chunk_eda(
            q, k, v, x["g"], x["beta"], x["e"], x["gamma"], **fs),
            "dplr over 2T", lambda: f(**route, **fs),
            view=lambda out: (out[0][:, 1::2], out[1]),
            note="o at the delta rows; βk, γe, exp(g)⊙e rounded to bf16 for fla")
    if spec == "qed":
        f = fla_op("fla.ops.generalized_delta_rule", "chunk_dplr_delta_rule")
        route = qed_as_dplr(x)
        return Case(inputs, lambda: rkc_torch.chunk_qed(
            q, k, v, x["g"], x["b"], x["w"], x["lam"], **fs),
            "dplr over T", lambda: f(**route, **fs),
            note="exp(g)⊙a, w⊙v rounded to bf16 for fla")
    raise ValueError("no prefill case for %r" % spec)


def decode_case(spec, N, H, D, seed):
    d = Draw(seed)
    x, _ = draw_inputs(spec, d, N, 1, H, D)
    initial = 0.1 * d.normal(N, H, D, D)
    lib = rkc_library(spec, D, D, PARAMS.get(spec, ()))
    ordered = [x[i["name"]] for i in lib.manifest["inputs"]]

    def rkc():
        # Outputs allocated per call, like the other side's; the state is read
        # from `initial` and written to a separate tensor so that repeating
        # the same step thousands of times never drifts.
        o = torch.empty(N, 1, H, D, dtype=x["v"].dtype, device="cuda")
        final = torch.empty_like(initial)
        lib.call("decode", torch.cuda.current_stream().cuda_stream, ordered,
                 o, initial, final)
        return o, final

    inputs = ordered + [initial]
    fs = dict(initial_state=initial, output_final_state=True)
    if spec == "kda":
        f = fla_op("fla.ops.kda", "fused_recurrent_kda")
        return Case(inputs, rkc, "fused_recurrent_kda",
                    lambda: f(x["q"], x["k"], x["v"], x["g"], x["beta"], **fs))
    if spec == "gdn":
        f = fla_op("fla.ops.gated_delta_rule", "fused_recurrent_gated_delta_rule")
        # g and beta by keyword: fla's fifth positional argument is gk.
        return Case(inputs, rkc, "fused_recurrent_gated_delta_rule",
                    lambda: f(x["q"], x["k"], x["v"], g=x["g"], beta=x["beta"], **fs))
    return Case(inputs, rkc, "float64 step",
                reference=lambda: decode_reference(spec, x, initial))


def decode_reference(spec, x, initial):
    """One token of the recurrence in float64 (MATH.md's table)."""
    f = {n: t.double() for n, t in x.items()}
    S = initial.double()
    dk = S.shape[-2]

    def tok(name):                 # the token's row: [N, H, ...]
        return f[name][:, 0]

    def read(u, S):                # uᵀ S
        return torch.einsum("nhk,nhkv->nhv", u, S)

    def outer(u, w):
        return u[..., :, None] * w[..., None, :]

    def delta(S, k, v, beta):      # (I - β k kᵀ) S + β k vᵀ
        return S + beta[..., None, None] * outer(k, v - read(k, S))

    def decay(S, g):               # Diag(exp g) S, g per channel or scalar
        return S * (g.exp()[..., :, None] if g.dim() == 3 else g.exp()[..., None, None])

    q = tok("q")
    if spec == "linear_attention":
        S = S + outer(tok("k"), tok("v"))
    elif spec == "deltanet":
        S = delta(S, tok("k"), tok("v"), tok("beta"))
    elif spec in ("gdn", "kda"):
        S = delta(decay(S, tok("g")), tok("k"), tok("v"), tok("beta"))
    elif spec in ("gdn2", "qed"):
        k = tok("k")
        if spec == "gdn2":
            a = tok("a")
        else:
            bq = tok("b") * q
            a = tok("b") * k + f["lam"][None, :, None] * (
                bq - k * (k * bq).sum(-1, keepdim=True))
        S = decay(S, tok("g"))
        S = S - outer(k, read(a, S)) + outer(k, tok("w") * tok("v"))
    elif spec == "eda":
        e = tok("e")
        S = decay(S, tok("g"))
        S = S - tok("gamma")[..., None, None] * outer(e, read(e, S))
        S = delta(S, tok("k"), tok("v"), tok("beta"))
    elif spec == "deltaproduct":
        S = decay(S, tok("g"))
        for j in range(f["k"].shape[1]):
            S = delta(S, f["k"][:, j], f["v"][:, j], f["beta"][:, j])
    elif spec == "comba":
        S = decay(S, tok("g"))
        S = S + tok("beta")[..., None, None] * outer(
            tok("k"), tok("v") - read(tok("p"), S))
    elif spec == "dplr":           # b reads the state before the decay
        S = decay(S, tok("g")) + outer(tok("a"), read(tok("b"), S)) + \
            outer(tok("k"), tok("v"))
    else:
        raise ValueError("no decode reference for %r" % spec)
    return read(q * dk ** -0.5, S)[:, None], S


# ---------------------------------------------------------- measurement --

class Timing:
    def __init__(self, times):
        times = sorted(times)
        self.n = len(times)
        self.median = quantile(times, 0.5)
        self.p20 = quantile(times, 0.2)
        self.p80 = quantile(times, 0.8)


def quantile(sorted_values, p):
    x = p * (len(sorted_values) - 1)
    lo = int(math.floor(x))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (x - lo)


def measure(fn, rep_ms, warmup_ms):
    """CUDA-event times of `fn` in ms, each after zeroing a buffer larger
    than L2 (as triton's do_bench does); the zeroing also keeps the GPU busy
    while the host enqueues the next call, so host overhead stays out."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        FLUSH.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 3, 1e-3)
    for _ in range(min(max(int(warmup_ms / estimate), 1), 25)):
        fn()
    n = min(max(int(rep_ms / estimate), 10), 200)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        FLUSH.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return Timing([s.elapsed_time(e) for s, e in zip(starts, ends)])


def tensors_in(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in tensors_in(o)]
    return []


def nbytes(t):
    return t.numel() * t.element_size()


def extra_memory(fn):
    """Bytes the call allocates beyond what was live before it and what it
    returns: the peak of torch's caching allocator (where fla's and
    rkc_torch's tensors live). Also the device memory the call leaves taken
    outside that allocator (a library's own cuMemAlloc), from cudaMemGetInfo:
    a transient allocation outside torch would not show."""
    gc.collect()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    reserved = torch.cuda.memory_reserved()
    free = torch.cuda.mem_get_info()[0]
    torch.cuda.reset_peak_memory_stats()
    out = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    storages = {}
    for t in tensors_in(out):   # a view counts as the whole of its storage
        storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        storages[storage.data_ptr()] = storage.nbytes()
    outside = (free - torch.cuda.mem_get_info()[0]) - (
        torch.cuda.memory_reserved() - reserved)
    del out
    return peak - before - sum(storages.values()), outside


def rel(x, ref):
    """‖x - ref‖ / ‖ref‖ (Frobenius), in float64 on the device."""
    if tuple(x.shape) != tuple(ref.shape):
        raise ValueError("shape %s vs reference %s" % (tuple(x.shape), tuple(ref.shape)))
    x, ref = x.double(), ref.double()
    if not bool(torch.isfinite(x).all()):
        return float("inf")
    return ((x - ref).norm() / ref.norm().clamp_min(1e-300)).item()


def copy_bandwidth(rep_ms, warmup_ms):
    """Device copy bandwidth, read + write bytes of a 1 GiB copy_ over its time."""
    n = 1 << 30
    src = torch.ones(n // 4, device="cuda")
    dst = torch.empty_like(src)
    t = measure(lambda: dst.copy_(src), rep_ms, warmup_ms)
    return 2 * n / t.median / 1e6


def one_line(e):
    text = str(e).strip().splitlines()
    message = "%s: %s" % (type(e).__name__, text[0] if text else "")
    return message[:200]


STARTED = 0.0   # when main() began, for --time-limit


def run_row(section, spec, shape, make_case, args, compile_errors):
    row = {"section": section, "spec": spec, "shape": shape, "status": "ok",
           "label": "", "note": "", "err_o": None, "err_s": None,
           "rkc": None, "fla": None, "bytes": None, "mem_rkc": None,
           "mem_fla": None}
    if args.time_limit and time.time() - STARTED > args.time_limit:
        row["status"] = "not run: past --time-limit"
        log(row)
        return row
    if spec in compile_errors:   # said once already, while compiling
        row["status"] = "error: compile: " + compile_errors[spec]
        log(row)
        return row
    case = out = ref = None
    try:
        case = make_case()
        row["label"], row["note"] = case.label, case.note
        out = case.rkc()
        ref = case.view(case.fla()) if case.fla else case.reference()
        torch.cuda.synchronize()
        row["bytes"] = sum(nbytes(t) for t in case.inputs) + nbytes(out[0]) + nbytes(out[1])
        row["err_o"], row["err_s"] = rel(out[0], ref[0]), rel(out[1], ref[1])
        out = ref = None
        if not (row["err_o"] <= BOUND and row["err_s"] <= BOUND):
            row["status"] = "FAILED"
        else:
            row["rkc"] = measure(case.rkc, args.rep_ms, args.warmup_ms)
            row["mem_rkc"] = extra_memory(case.rkc)
            if case.fla:
                row["fla"] = measure(case.fla, args.rep_ms, args.warmup_ms)
                row["mem_fla"] = extra_memory(case.fla)
    except Exception as e:  # one row's failure is a row, not the end of the run
        row["status"] = "error: " + one_line(e)
        tail = traceback.format_exc().rstrip().splitlines()[-12:]
        print("    " + "\n    ".join(tail), file=sys.stderr, flush=True)
    finally:
        case = out = ref = None
        gc.collect()
        torch.cuda.empty_cache()
    log(row)
    return row


def log(row):
    parts = ["[%s]" % row["section"], row["spec"], shape_text(row["shape"])]
    if row["rkc"]:
        parts.append("rkc %s ms" % ms(row["rkc"].median))
    if row["fla"]:
        parts.append("%s %s ms (%.2fx)" % (row["label"], ms(row["fla"].median),
                                           row["fla"].median / row["rkc"].median))
    if row["err_o"] is not None:
        parts.append("err o %.1e state %.1e vs %s" % (row["err_o"], row["err_s"],
                                                      row["label"]))
    parts.append(row["status"])
    print(" ".join(parts), file=sys.stderr, flush=True)


# --------------------------------------------------------------- building --

def precompile(specs, dims, python_dir):
    """Builds every spec's library at once, in child processes: rkc_torch
    builds one spec at a time within a process, and nvcc takes ~20-60 s a
    spec. The children fill rkc_torch's disk cache; this process then loads
    from it. Returns {spec: error} for the specs that did not build."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from rkc_torch._library import library; "
            "library(sys.argv[2], int(sys.argv[3]), int(sys.argv[3]), "
            "tuple(sys.argv[4:]))")
    jobs = []
    for spec in specs:
        for dim in dims:
            cmd = [sys.executable, "-c", code, python_dir, spec, str(dim)]
            jobs.append((spec, subprocess.Popen(
                cmd + list(PARAMS.get(spec, ())), stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True)))
    errors = {}
    deadline = time.time() + 1200
    for spec, p in jobs:
        try:
            _, err = p.communicate(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            errors[spec] = "timed out"
            continue
        if p.returncode:
            lines = [l for l in err.strip().splitlines() if l.strip()]
            errors[spec] = (lines[-1] if lines else "exit %d" % p.returncode)[:200]
            print("compiling %s failed:\n    %s" % (spec, "\n    ".join(lines[-15:])),
                  file=sys.stderr, flush=True)
    return errors


# ---------------------------------------------------------------- report --

def shape_text(shape):
    return ",".join(str(s) for s in shape)


def ms(t):
    return "%.3f" % t if t >= 0.1 else "%.4f" % t


def timing_text(t):
    return "%s (%s–%s)" % (ms(t.median), ms(t.p20), ms(t.p80)) if t else "–"


def speedup(row):
    if row and row["rkc"] and row["fla"]:
        return row["fla"].median / row["rkc"].median
    return None


def gbs(row):
    if row and row["rkc"] and row["bytes"]:
        return row["bytes"] / row["rkc"].median / 1e6
    return None


def mib(x):
    return "%.1f" % (x / 2 ** 20) if x is not None else "–"


def memory_text(row):
    def side(m):
        if m is None:
            return "–"
        text = mib(m[0])
        if abs(m[1]) >= 2 ** 20:   # left taken outside torch's allocator
            text += " (+%s outside torch)" % mib(m[1])
        return text
    return "%s / %s" % (side(row["mem_rkc"]), side(row["mem_fla"]))


def err_text(e):
    return "–" if e is None else ("%.1e" % e)


def status_text(row):
    s = row["status"]
    if row["note"] and s == "ok":
        s = "ok; " + row["note"]
    elif row["note"]:
        s += "; " + row["note"]
    return s.replace("|", "/")


def table(headers, lines):
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in line) + " |" for line in lines]
    return out


def prefill_lines(rows, copy_gbs):
    lines = []
    for r in rows:
        s, g = speedup(r), gbs(r)
        lines.append([r["spec"], shape_text(r["shape"]), r["label"] or "–",
                      timing_text(r["rkc"]), timing_text(r["fla"]),
                      "%.2f×" % s if s else "–", err_text(r["err_o"]),
                      err_text(r["err_s"]), "%.0f" % g if g else "–",
                      "%.0f%%" % (100 * g / copy_gbs) if g else "–",
                      memory_text(r), status_text(r)])
    return lines


def step_ratios(rows):
    """(T, t_i / t_{i-1} over T_i / T_{i-1}) for RKC along a sweep."""
    out = []
    timed = [r for r in rows if r["rkc"]]
    for prev, cur in zip(timed, timed[1:]):
        grow = cur["shape"][1] / prev["shape"][1]
        out.append((prev["shape"][1], cur["shape"][1],
                    cur["rkc"].median / prev["rkc"].median / grow))
    return out


def acceptance(specs, prefill, sweep, decode, copy_gbs):
    """(item, target, measured, verdict) from the measurements."""
    items = []

    def verdict(values, ok, complete):
        if values and not all(ok(v) for v in values):
            return "FAIL"
        if values and complete:
            return "pass"
        return "n/a"

    def by(rows, spec):
        return [r for r in rows if r["spec"] == spec]

    for spec, target in SPEEDUP_TARGETS:
        if spec not in specs:
            continue
        rows = by(prefill, spec)
        vals = [speedup(r) for r in rows]
        got = [v for v in vals if v is not None]
        labels = [r["label"] for r in rows if r["label"]]
        ref = labels[0] if labels else {"eda": "DPLR over 2T",
                                        "qed": "DPLR"}.get(spec, "")
        items.append(("%s prefill faster than fla %s" % (spec, ref),
                      "≥ %.1f×" % target,
                      ", ".join("%.2f×" % v if v else "–" for v in vals) or "–",
                      verdict(got, lambda v: v >= target, len(got) == len(vals))))
    for spec, target in OVER_KDA_TARGETS:
        if spec not in specs or "kda" not in specs:
            continue
        kda = {r["shape"]: r for r in by(prefill, "kda")}
        vals = []
        for r in by(prefill, spec):
            k = kda.get(r["shape"])
            vals.append(r["rkc"].median / k["rkc"].median
                        if r["rkc"] and k and k["rkc"] else None)
        got = [v for v in vals if v is not None]
        items.append(("%s prefill time over RKC's kda" % spec, "≤ %.1f×" % target,
                      ", ".join("%.2f×" % v if v else "–" for v in vals) or "–",
                      verdict(got, lambda v: v <= target, len(got) == len(vals))))
    share = {r["spec"] + " " + shape_text(r["shape"]):
             (gbs(r) / copy_gbs if gbs(r) else None) for r in decode}
    for spec in ("kda", "gdn"):
        if spec in specs:
            vals = [v for k, v in share.items() if k.split()[0] == spec]
            got = [v for v in vals if v is not None]
            items.append(("%s decode, share of copy bandwidth" % spec,
                          "≥ %.0f%%" % (100 * DECODE_SHARE),
                          ", ".join("%.0f%%" % (100 * v) if v else "–" for v in vals) or "–",
                          verdict(got, lambda v: v >= DECODE_SHARE, len(got) == len(vals))))
    if share:
        got = {k: v for k, v in share.items() if v is not None}
        worst = min(got, key=got.get) if got else None
        items.append(("decode, every spec, share of copy bandwidth",
                      "≥ %.0f%%" % (100 * DECODE_SHARE),
                      "min %.0f%% (%s)" % (100 * got[worst], worst) if worst else "–",
                      verdict(list(got.values()), lambda v: v >= DECODE_SHARE,
                              len(got) == len(share))))
    for spec in SWEEP_SPECS:
        rows = by(sweep, spec)
        if spec not in specs or not rows:
            continue
        ratios = step_ratios(rows)
        worst = max(ratios, key=lambda x: x[2]) if ratios else None
        items.append(("%s linear in T (RKC): each step over linear extrapolation" % spec,
                      "≤ %.2f×" % LINEAR_SLACK,
                      "worst %.2f× (%d→%d)" % (worst[2], worst[0], worst[1]) if worst else "–",
                      verdict([r[2] for r in ratios], lambda v: v <= LINEAR_SLACK,
                              len(ratios) == len(rows) - 1 and len(rows) > 1)))
    return items


def write_report(path, plots_dir, args, info, copy_gbs, specs, prefill, sweep,
                 decode):
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(plots_dir, exist_ok=True)
    speed_svg = os.path.join(plots_dir, "speedup.svg")
    time_svg = os.path.join(plots_dir, "time_vs_t.svg")

    shapes = []
    for r in prefill:
        if r["shape"] not in shapes:
            shapes.append(r["shape"])
    groups = [s for s in specs if any(r["spec"] == s for r in prefill)]
    values = [[speedup(next((r for r in prefill if r["spec"] == g and r["shape"] == sh), None))
               for sh in shapes] for g in groups]
    targets = dict(SPEEDUP_TARGETS)
    with open(speed_svg, "w") as f:
        f.write(svg_bars("Prefill speed-up over fla (fla ms / RKC ms; eda, qed: over fla's DPLR)",
                         [g + (" (DPLR)" if g in ("eda", "qed") else "") for g in groups],
                         [shape_text(s) for s in shapes], values,
                         [targets.get(g) for g in groups]))
    series = []
    for spec in SWEEP_SPECS:
        rows = [r for r in sweep if r["spec"] == spec]
        if rows:
            fla_name = "fla DPLR over 2T" if spec == "eda" else "fla " + rows[0]["label"]
            series.append(("RKC " + spec, [(r["shape"][1], r["rkc"].median)
                                           for r in rows if r["rkc"]], False))
            series.append((fla_name, [(r["shape"][1], r["fla"].median)
                                      for r in rows if r["fla"]], True))
    with open(time_svg, "w") as f:
        f.write(svg_lines("Time against T (B = %d, H = %d, D = %d)" % (
            SWEEP_B, SWEEP_H, SWEEP_D), series, "T (tokens)", "ms"))

    md = ["# Benchmarks: RKC against flash-linear-attention", "",
          "Written by `bench/benchmark.py` (do not edit by hand): `%s`." % " ".join(
              ["python3", "bench/benchmark.py"] + [
                  shown_path(a) if os.path.isabs(a) else a
                  for a in sys.argv[1:]]), ""]
    md += table(["run", ""], [[k, v] for k, v in info] + [
        ["device copy bandwidth", "%.0f GB/s (read + write bytes of a 1 GiB "
         "`copy_`, this run)" % copy_gbs]])
    md += ["", "Method: one process, the same inputs on both sides (bf16 q, k, v and "
           "strengths, fp32 log-space gates `logsigmoid(N)` clamped to [-5, 0], q/k/e "
           "L2-normalised, a fresh seed a row). Each row is checked first: relative "
           "Frobenius error of o and of the final state between RKC and the reference, "
           "bound %.0e; a row beyond it is FAILED and not timed. Times: CUDA events, "
           "warm-up, L2 flushed before every repetition; median (p20–p80) in ms. "
           "GB/s: RKC's compulsory bytes (its inputs once, o and the final state once, "
           "and the initial state in decode) over its median; \"of copy\" is that over "
           "the copy bandwidth above. Extra MiB: peak of torch's allocator during one "
           "call minus what was live before and what the call returns (RKC / reference)."
           % BOUND, ""]

    md += ["## Acceptance (the performance targets)", ""]
    md += table(["item", "target", "measured", "verdict"],
                acceptance(specs, prefill, sweep, decode, copy_gbs))
    md += ["", "Speed-ups per prefill shape in the table's order; n/a: not measured "
           "(a row failed, errored or was not run).", ""]

    headers = ["spec", "%s", "reference", "rkc ms (p20–p80)", "fla ms (p20–p80)",
               "fla/rkc", "err o", "err state", "RKC GB/s", "of copy",
               "extra MiB rkc / fla", "status"]
    md += ["## Prefill", "",
           "![prefill speed-up over fla](%s)" % os.path.relpath(speed_svg, folder), ""]
    md += table([h % "B,T,H,D" if "%" in h else h for h in headers],
                prefill_lines(prefill, copy_gbs))

    md += ["", "## Time against T", "",
           "![time against T](%s)" % os.path.relpath(time_svg, folder), ""]
    lines = []
    for spec in SWEEP_SPECS:
        rows = [r for r in sweep if r["spec"] == spec]
        ratios = {cur: x for _, cur, x in step_ratios(rows)}
        for r in rows:
            s = speedup(r)
            x = ratios.get(r["shape"][1])
            lines.append([spec, r["shape"][1], r["label"] or "–", timing_text(r["rkc"]),
                          timing_text(r["fla"]), "%.2f×" % s if s else "–",
                          "%.2f" % x if x else "–", err_text(r["err_o"]),
                          err_text(r["err_s"]), status_text(r)])
    md += table(["spec", "T", "reference", "rkc ms (p20–p80)", "fla ms (p20–p80)",
                 "fla/rkc", "rkc step / linear", "err o", "err state", "status"], lines)
    md += ["", "B = %d, H = %d, D = %d. \"rkc step / linear\": RKC's time over the "
           "previous T's time scaled by the ratio of the T's (1.00 is linear)." % (
               SWEEP_B, SWEEP_H, SWEEP_D), ""]

    md += ["## Decode (one token a sequence, state read and written in fp32)", ""]
    md += table([h % "N,H,D" if "%" in h else h for h in headers],
                prefill_lines(decode, copy_gbs))
    md += ["", "Decode calls the generated library directly (rkc_torch's ctypes "
           "binding), reading the initial state and writing the final state to "
           "another tensor. kda and gdn are checked and timed against fla's "
           "fused_recurrent kernels; the other specs are checked against one "
           "float64 step of MATH.md's recurrence and have no fla timing.", ""]

    md += ["## How each spec meets fla", "",
           "- kda, gdn, deltanet, comba, deltaproduct (n = %d): fla's chunk kernel of the "
           "same recurrence, argument for argument." % PRODUCT_N,
           "- linear_attention: `chunk_linear_attn(..., normalize=False)` (no "
           "denominator: S += k vᵀ, o = Sᵀ(scale q)).",
           "- gdn2: fla's `chunk_gdn2` takes an erase gate b and forms a = b⊙k; "
           "RKC gets that a. b is drawn as a power of two so that a is exact in "
           "bf16 and both sides use the same vector.",
           "- dplr: ours writes along a and reads at b; fla's `a` reads and its `b` "
           "writes, so fla gets a = our b, b = our a, gk = g.",
           "- eda: `chunk_dplr_delta_rule` over 2T rows (MATH.md's sub-step table): "
           "row 2t erase (gk = g, read exp(g)⊙e, write -γe, k = v = 0), row 2t+1 "
           "delta (gk = 0, read k, write -βk, k = βk, v); o compared at the delta "
           "rows. Exact up to the bf16 rounding of exp(g)⊙e, γe and βk on fla's side "
           "(that rounding alone is about 1.6e-3 of relative error at D = 128).",
           "- qed: `chunk_dplr_delta_rule` over T with a = b⊙k + λ P⊥_k(b⊙q) computed "
           "in float32: read exp(g)⊙a, write -k, v = w⊙v. Exact up to the bf16 "
           "rounding of exp(g)⊙a and w⊙v on fla's side (again about 1.6e-3 by itself).",
           "- The DPLR routes are timed on inputs prepared beforehand: the preparation "
           "(interleaving, the erase vector) is not in fla's time.", ""]
    text = "\n".join(md)
    with open(path, "w") as f:
        f.write(text)
    return text


# ------------------------------------------------------------------- SVG --

COLORS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377"]
FONT = 'font-family="sans-serif"'


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_open(w, h, title):
    return ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'viewBox="0 0 %d %d">' % (w, h, w, h),
            '<rect width="%d" height="%d" fill="white"/>' % (w, h),
            '<text x="%d" y="24" %s font-size="15" text-anchor="middle">%s</text>'
            % (w // 2, FONT, esc(title))]


def svg_empty(w, h, title):
    return "\n".join(svg_open(w, h, title) + [
        '<text x="%d" y="%d" %s font-size="13" text-anchor="middle" fill="#777">'
        'no data</text>' % (w // 2, h // 2, FONT), "</svg>", ""])


def svg_bars(title, groups, series, values, targets):
    """Grouped bars on a log axis, each from parity (1×) up or down to its
    value: values[group][series], None where not measured; a short thick
    dashed mark at each group's target."""
    w, h = 960, 420
    left, right, top, bottom = 64, 20, 64, 70
    flat = [v for vs in values for v in vs if v is not None and v > 0]
    if not groups or not flat:
        return svg_empty(w, h, title)
    marks = flat + [t for t in targets if t] + [1.0]
    lo, hi = math.log(min(marks)) - 0.25, math.log(max(marks)) + 0.25
    pw, ph = w - left - right, h - top - bottom

    def y(v):
        return top + ph - (math.log(v) - lo) / (hi - lo) * ph

    out = svg_open(w, h, title)
    for t in log_ticks(math.exp(lo), math.exp(hi)):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (left, w - right, y(t), y(t)))
        out.append('<text x="%d" y="%.1f" %s font-size="11" text-anchor="end">%g×</text>'
                   % (left - 6, y(t) + 4, FONT, t))
    out.append('<text x="16" y="%d" %s font-size="12" transform="rotate(-90 16 %d)" '
               'text-anchor="middle">fla time / RKC time</text>'
               % (top + ph // 2, FONT, top + ph // 2))
    gw = pw / len(groups)
    bw = gw * 0.78 / max(len(series), 1)
    for gi, group in enumerate(groups):
        x0 = left + gi * gw + gw * 0.11
        for si, v in enumerate(values[gi]):
            x = x0 + si * bw
            if v is None or v <= 0:
                out.append('<text x="%.1f" y="%.1f" %s font-size="11" fill="#999" '
                           'text-anchor="middle">×</text>' % (x + bw / 2, y(1.0) - 3, FONT))
                continue
            y0, y1 = sorted((y(v), y(1.0)))
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                       % (x, y0, bw - 1, max(y1 - y0, 1.0), COLORS[si % len(COLORS)]))
            ty = y(v) - 3 if v >= 1 else y(v) + 10
            out.append('<text x="%.1f" y="%.1f" %s font-size="9" text-anchor="middle">'
                       '%s</text>' % (x + bw / 2, ty, FONT, "%.2f" % v if v >= 0.1 else "%.3f" % v))
        if targets[gi]:
            out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="black" '
                       'stroke-width="2" stroke-dasharray="4 3"/>'
                       % (x0 - 2, x0 + len(series) * bw + 1, y(targets[gi]), y(targets[gi])))
        out.append('<text x="%.1f" y="%d" %s font-size="12" text-anchor="middle">%s</text>'
                   % (left + (gi + 0.5) * gw, h - bottom + 18, FONT, esc(group)))
    out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#444"/>'
               % (left, w - right, y(1.0), y(1.0)))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>'
               % (left, top, pw, ph))
    lx = left
    for si, name in enumerate(series):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'
                   % (lx, top - 26, COLORS[si % len(COLORS)]))
        out.append('<text x="%d" y="%d" %s font-size="11">B,T,H,D = %s</text>'
                   % (lx + 16, top - 16, FONT, esc(name)))
        lx += 190
    out.append('<text x="%d" y="%d" %s font-size="11">thick dashes: the target</text>'
               % (lx, top - 16, FONT))
    out.append('<text x="%d" y="%d" %s font-size="10" fill="#777">bars start at parity '
               '(1×): up, RKC is faster; × : not measured</text>' % (left, h - 12, FONT))
    return "\n".join(out + ["</svg>", ""])


def log_ticks(lo, hi):
    ticks = []
    for e in range(int(math.floor(math.log10(lo))) - 1, int(math.ceil(math.log10(hi))) + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** e
            if lo <= v <= hi:
                ticks.append(v)
    return ticks


def svg_lines(title, series, xlabel, ylabel):
    """Log-log lines: series = [(name, [(x, y)], dashed)]."""
    w, h = 760, 460
    left, right, top, bottom = 70, 190, 48, 56
    pts = [p for _, ps, _ in series for p in ps]
    if not pts:
        return svg_empty(w, h, title)
    xs = sorted({p[0] for p in pts})
    x0, x1 = math.log(min(xs)), math.log(max(xs))
    pad = max(x1 - x0, 1.0) * 0.04
    x0, x1 = x0 - pad, x1 + pad
    ylo, yhi = min(p[1] for p in pts), max(p[1] for p in pts)
    y0, y1 = math.log(ylo) - 0.15, math.log(yhi) + 0.15
    pw, ph = w - left - right, h - top - bottom

    def px(v):
        return left + (math.log(v) - x0) / (x1 - x0) * pw

    def py(v):
        return top + ph - (math.log(v) - y0) / (y1 - y0) * ph

    out = svg_open(w, h, title)
    yticks = log_ticks(math.exp(y0), math.exp(y1))
    if len(yticks) < 2:           # under a 1-2-5 step: label the data's ends
        yticks = sorted({ylo, yhi})
    for v in yticks:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (left, left + pw, py(v), py(v)))
        out.append('<text x="%d" y="%.1f" %s font-size="11" text-anchor="end">%.3g</text>'
                   % (left - 6, py(v) + 4, FONT, v))
    for v in xs:
        label = "%dk" % (v // 1024) if v % 1024 == 0 else str(v)
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#eee"/>'
                   % (px(v), px(v), top, top + ph))
        out.append('<text x="%.1f" y="%d" %s font-size="11" text-anchor="middle">%s</text>'
                   % (px(v), top + ph + 16, FONT, label))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>'
               % (left, top, pw, ph))
    out.append('<text x="%d" y="%d" %s font-size="12" text-anchor="middle">%s</text>'
               % (left + pw // 2, h - 14, FONT, esc(xlabel)))
    out.append('<text x="18" y="%d" %s font-size="12" transform="rotate(-90 18 %d)" '
               'text-anchor="middle">%s</text>' % (top + ph // 2, FONT, top + ph // 2,
                                                   esc(ylabel)))
    for i, (name, ps, dashed) in enumerate(series):
        color = COLORS[(i // 2) % len(COLORS)]   # one color a spec, fla dashed
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        ps = sorted(ps)
        if len(ps) > 1:
            out.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>'
                       % (color, dash, " ".join("%.1f,%.1f" % (px(a), py(b)) for a, b in ps)))
        for a, b in ps:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (px(a), py(b), color))
        ly = top + 10 + i * 20
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (left + pw + 14, left + pw + 40, ly, ly, color, dash))
        out.append('<text x="%d" y="%d" %s font-size="11">%s</text>'
                   % (left + pw + 46, ly + 4, FONT, esc(name)))
    return "\n".join(out + ["</svg>", ""])


# ------------------------------------------------------------- the machine --

def git(folder, *cmd):
    r = subprocess.run(["git", "-C", folder] + list(cmd), capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def shown_path(path):
    """A path as the report shows it: relative to the repository when inside
    it, else the path as given (the report should not depend on where the
    checkout happens to sit)."""
    path = os.path.abspath(path)
    if os.path.commonpath([path, ROOT]) == ROOT:
        return os.path.relpath(path, ROOT)
    return path


def machine_info(args, fla_root):
    info = [("GPU", torch.cuda.get_device_name())]
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                            "--format=csv,noheader"], capture_output=True, text=True)
        driver = r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "?"
    except OSError:
        driver = "?"
    info.append(("driver", driver))
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = "?"
    info.append(("torch / CUDA / triton", "%s / %s / %s" % (
        torch.__version__, torch.version.cuda, triton_version)))
    commit = args.commit or git(ROOT, "rev-parse", "--short", "HEAD") or "?"
    if not args.commit and git(ROOT, "status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    info.append(("rkc commit", commit))
    info.append(("rkc binary", shown_path(args.rkc)))
    try:
        version = importlib.import_module("fla").__version__
    except Exception:
        version = "?"
    fla_commit = args.fla_commit
    top = git(fla_root, "rev-parse", "--show-toplevel")
    if not fla_commit and top and os.path.realpath(top) == os.path.realpath(fla_root):
        fla_commit = git(fla_root, "rev-parse", "--short", "HEAD")
    info.append(("fla", "%s (version %s, commit %s)" % (
        shown_path(fla_root), version, fla_commit or "unknown: not a git checkout")))
    info.append(("date", datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")))
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rkc", required=True, help="the rkc binary")
    parser.add_argument("--fla", required=True,
                        help="folder holding a copy of fla's fla/ package")
    parser.add_argument("--out", default="BENCHMARKS.md")
    parser.add_argument("--plots", default="bench/plots",
                        help="folder of the SVG plots, relative to --out's folder")
    parser.add_argument("--specs", default=",".join(SPECS))
    parser.add_argument("--quick", action="store_true",
                        help="first prefill shape, T up to 8192, first decode shape")
    parser.add_argument("--commit", help="rkc commit to report (default: git HEAD)")
    parser.add_argument("--fla-commit", help="fla commit to report, if --fla is no git checkout")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rep-ms", type=float, default=200.0,
                        help="time spent in timed repetitions, per side (10 to 200 of them)")
    parser.add_argument("--warmup-ms", type=float, default=30.0)
    parser.add_argument("--sections", default="prefill,decode,sweep",
                        help="which tables to measure (the others are left "
                             "out of the report)")
    parser.add_argument("--time-limit", type=float, default=0,
                        help="seconds: rows not started by then are reported "
                             "as not run (the report is still written)")
    args = parser.parse_args()

    sections = [s for s in args.sections.split(",") if s]
    unknown_sections = [s for s in sections
                        if s not in ("prefill", "decode", "sweep")]
    if unknown_sections or not sections:
        parser.error("--sections takes prefill, decode and sweep, got %r" %
                     args.sections)
    specs = [s for s in args.specs.split(",") if s]
    unknown = [s for s in specs if s not in SPECS]
    if unknown:
        parser.error("unknown spec(s) %s; known: %s" % (", ".join(unknown), ", ".join(SPECS)))
    if not torch.cuda.is_available():
        sys.exit("benchmark.py: no CUDA device")
    fla_root = os.path.abspath(args.fla)
    if os.path.basename(fla_root) == "fla" and os.path.exists(
            os.path.join(fla_root, "__init__.py")):
        fla_root = os.path.dirname(fla_root)   # given the package itself
    python_dir = os.path.join(ROOT, "python")
    sys.path.insert(0, python_dir)
    sys.path.insert(0, fla_root)
    os.environ["RKC"] = os.path.abspath(args.rkc)
    global rkc_torch, rkc_library, FLUSH
    import rkc_torch as _rkc_torch
    from rkc_torch._library import library
    rkc_torch, rkc_library = _rkc_torch, library

    prefill_shapes = PREFILL_SHAPES[:1] if args.quick else PREFILL_SHAPES
    sweep_ts = [t for t in SWEEP_T if t <= 8192] if args.quick else SWEEP_T
    decode_shapes = DECODE_SHAPES[:1] if args.quick else DECODE_SHAPES
    dims = sorted({s[3] for s in prefill_shapes} | {s[2] for s in decode_shapes} |
                  ({SWEEP_D} if any(s in specs for s in SWEEP_SPECS) else set()))

    global STARTED
    started = STARTED = time.time()
    print("compiling %s (d = %s) ..." % (", ".join(specs), dims), file=sys.stderr, flush=True)
    compile_errors = precompile(specs, dims, python_dir)
    print("compiled in %.0f s%s" % (time.time() - started, "".join(
        "; %s: %s" % kv for kv in compile_errors.items())), file=sys.stderr, flush=True)

    prefill, sweep, decode, done = [], [], [], {}
    seed = [args.seed * 1000]

    def next_seed():
        seed[0] += 1
        return seed[0]

    with torch.inference_mode():
        FLUSH = torch.empty(512 << 20, dtype=torch.int8, device="cuda")
        copy_gbs = copy_bandwidth(args.rep_ms, args.warmup_ms)
        torch.cuda.empty_cache()
        print("device copy bandwidth %.0f GB/s" % copy_gbs, file=sys.stderr, flush=True)
        sections = set(args.sections.split(","))
        for spec in specs if "prefill" in sections else []:
            for shape in prefill_shapes:
                row = run_row("prefill", spec, shape,
                              lambda: prefill_case(spec, *shape, next_seed()),
                              args, compile_errors)
                prefill.append(row)
                done[(spec, shape)] = row
        for spec in specs if "decode" in sections else []:
            for shape in decode_shapes:
                decode.append(run_row("decode", spec, shape,
                                      lambda: decode_case(spec, *shape, next_seed()),
                                      args, compile_errors))
        for spec in [s for s in SWEEP_SPECS
                     if s in specs and "sweep" in sections]:
            for T in sweep_ts:
                shape = (SWEEP_B, T, SWEEP_H, SWEEP_D)
                row = done.get((spec, shape))   # a prefill shape: measured already
                if row is None:
                    row = run_row("T sweep", spec, shape,
                                  lambda: prefill_case(spec, *shape, next_seed()),
                                  args, compile_errors)
                sweep.append(row)
        FLUSH = None

    out = os.path.abspath(args.out)
    plots_dir = os.path.join(os.path.dirname(out), args.plots)
    text = write_report(out, plots_dir, args, machine_info(args, fla_root), copy_gbs,
                        specs, prefill, sweep, decode)
    print("wrote %s and %s in %.0f s" % (out, plots_dir, time.time() - started),
          file=sys.stderr, flush=True)
    print(text)


if __name__ == "__main__":
    main()
