#!/usr/bin/env python3
"""Side-by-side benchmark of RKC's kernels and flash-linear-attention's.

For every example spec it draws realistic inputs (bf16 q, k, v and strengths,
fp32 log-space gates, q/k/e L2-normalised, a fresh seed a row), runs RKC's
prefill kernel through rkc_torch and the matching fla kernel in one process
on the same inputs, checks that the two agree (relative Frobenius error of o
and of the final state within 5e-3) and only then times both with CUDA events
(warm-up, L2 flushed before every repetition, each call enqueued while the GPU
still waits so that the host's time is not counted, median with p20/p80). Where the
two disagree, fla's kernel is a reference, not the truth: both sides are then
measured against a float64 evaluation of the recurrence (MATH.md's table,
token by token in torch, on the inputs RKC got), and a row whose RKC outputs
are within 5e-3 of it is timed all the same, its status "ok vs float64 (...)"
giving both sides' errors against float64; otherwise it is FAILED with them.
Then a sweep over T (kda, eda) and the one-token decode kernels, called
through rkc_torch's ctypes binding: kda and gdn against fla's fused_recurrent
kernels (judged the same way, by one float64 step, where the two disagree),
the other specs checked against one float64 step in torch. Last, `rkc tune`
on eda at (1, 8192, 32) from an empty database of the run's own
(BENCHMARKS.tuning/eda.jsonl and its winners table, beside --out): its wall
time, and its winner against the default schedule (the section "tune").

EDA and QED have no fla kernel: they are timed against fla's
chunk_dplr_delta_rule, per MATH.md's sub-step table (EDA over the doubled
sequence, an erase then a delta sub-step a token; QED over T with its erase
vector computed in torch), and RKC's outputs are checked against that route;
where the two disagree, the float64 judge evaluates EDA's or QED's own
recurrence on RKC's inputs.

It writes --out (the machine, the measured device copy bandwidth, the tables,
an acceptance table against the performance targets, two SVG plots beside it) and
prints the report on stdout last; progress goes to stderr, a line a row.

  python3 bench/benchmark.py --rkc build/bin/rkc --fla PATH_TO_FLA --out BENCHMARKS.md
  python3 bench/benchmark.py --rkc build/bin/rkc --fla PATH_TO_FLA --quick --specs kda,eda

The rows are also written as JSON lines after every row (--rows, by default
beside --out: BENCHMARKS.rows.jsonl), so that a run cut short by
--time-limit, or by a limit on the machine, is finished by another with
`--resume THAT_FILE`: the rows measured there (same rkc and fla commits, rkc
binary, versions, GPU, compile options, seed and times; their ratios side by
side as ever, their share of copy of their own run's copy bandwidth) are reported as they are, marked
"resumed", and only the rest are compiled and measured.

--fla is the folder holding a copy of flash-linear-attention's fla/ package:
it is imported from there, never vendored. --quick keeps the first prefill
shape, the T sweep up to 8192 and the first decode shape.
"""
import argparse
import ctypes
import datetime
import gc
import hashlib
import importlib
import os
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from report import (BOUND, PRODUCT_N, SWEEP_B, SWEEP_D, SWEEP_H,  # noqa: E402
                    SWEEP_SPECS, SWEEP_T, Timing, ms, planned_rows, resumable,
                    rows_from_json, rows_json, shape_text, shown_path,
                    tune_summary, write_report)

SPECS = ["kda", "gdn", "gdn2", "qed", "eda", "deltanet", "linear_attention",
         "comba", "dplr", "deltaproduct"]
PREFILL_SHAPES = [(1, 8192, 32, 128), (4, 4096, 16, 128), (1, 32768, 16, 128)]
DECODE_SHAPES = [(64, 32, 128), (256, 16, 128)]
PARAMS = {"deltaproduct": ("n=%d" % PRODUCT_N,)}
BF16 = torch.bfloat16


rkc_torch = None        # imported in main(), once --rkc and python/ are known
rkc_library = None
FLUSH = None            # the buffer zeroed before each timed repetition


# ----------------------------------------------------------------- inputs --

class Draw:
    """Realistic random inputs (MATH.md, "Numerical acceptance"). The device
    is a parameter for the CPU test of the float64 references
    (test/python/test_bench_reference.py)."""

    def __init__(self, seed, device="cuda"):
        self.device = device
        self.gen = torch.Generator(device=device)
        self.gen.manual_seed(seed)

    def normal(self, *shape):
        return torch.randn(shape, device=self.device, generator=self.gen)

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
                 reference=None, note="", exact=None):
        self.inputs = inputs          # what RKC reads (for the byte count)
        self.rkc = rkc                # () -> (o, final_state)
        self.label = label            # the reference, as the table names it
        self.fla = fla                # () -> fla's outputs, timed, or None
        self.view = view or (lambda out: (out[0], out[1]))
        self.reference = reference    # () -> (o, final_state) when no fla
        self.note = note
        # () -> (o, final_state) in float64 on RKC's inputs: the judge when
        # RKC and fla disagree, called only then (it is slow: a loop over T).
        self.exact = exact


def fla_op(module, name):
    return getattr(importlib.import_module(module), name)


def prefill_case(spec, B, T, H, D, seed):
    x, aux = draw_inputs(spec, Draw(seed), B, T, H, D)
    case = prefill_route(spec, x, aux)
    case.exact = lambda: recurrence_reference(spec, x)
    return case


def prefill_route(spec, x, aux):
    """RKC's prefill call on x and fla's matching kernel."""
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
        # fla's chunk kernel reads p at the state before the token's decay
        # (its Gram and W use the exclusive cumulative gate, g0); MATH.md's
        # comba reads the decayed state, which is reading exp(g)·p before it.
        p_fla = (torch.exp(x["g"])[..., None] * x["p"].float()).to(BF16)
        return Case(inputs, lambda: rkc_torch.chunk_comba(
            q, k, v, x["p"], x["g"], x["beta"], **fs), "chunk_comba",
            lambda: f(q, k, v, p_fla, x["g"], x["beta"], **fs),
            note="p' = exp(g)·p rounded to bf16 for fla")
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
    # No RKC library in fla's warm-up (warm_fla), which calls only fla's side.
    lib = rkc_library(spec, D, D, PARAMS.get(spec, ())) if rkc_library else None
    ordered = [x[i["name"]] for i in lib.manifest["inputs"]] if lib else []

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

    def exact():                 # the judge where RKC and fla disagree
        return decode_reference(spec, x, initial)

    if spec == "kda":
        f = fla_op("fla.ops.kda", "fused_recurrent_kda")
        return Case(inputs, rkc, "fused_recurrent_kda",
                    lambda: f(x["q"], x["k"], x["v"], x["g"], x["beta"], **fs),
                    exact=exact)
    if spec == "gdn":
        f = fla_op("fla.ops.gated_delta_rule", "fused_recurrent_gated_delta_rule")
        # g and beta by keyword: fla's fifth positional argument is gk.
        return Case(inputs, rkc, "fused_recurrent_gated_delta_rule",
                    lambda: f(x["q"], x["k"], x["v"], g=x["g"], beta=x["beta"], **fs),
                    exact=exact)
    return Case(inputs, rkc, "float64 step",
                reference=lambda: decode_reference(spec, x, initial))


# The inputs with several rows a token (MATH.md: sub-step j of token t at row
# t·n + j); every other input has one row a token, or none (lam [H]).
SUBSTEP_INPUTS = {"deltaproduct": ("k", "v", "beta")}


def token_rows(spec, f, t, T):
    """Token t of T's rows of the inputs f: [N, H, ...], the sub-step inputs
    [N, n, H, ...], the per-head constants (1-D) as they are."""
    rows = {}
    for name, x in f.items():
        if x.dim() == 1:
            rows[name] = x
        elif name in SUBSTEP_INPUTS.get(spec, ()):
            n = x.shape[1] // T
            rows[name] = x[:, t * n:(t + 1) * n]
        else:
            rows[name] = x[:, t]
    return rows


def recurrence_step(spec, S, tok):
    """One token of the recurrence in float64 (MATH.md's table): the state
    after it from S [N, H, dk, dv] and the token's rows `tok` (token_rows),
    and the token's output [N, H, dv], read after the update with scale
    dk^-0.5 on q."""
    dk = S.shape[-2]

    def read(u, S):                # uᵀ S
        return torch.einsum("nhk,nhkv->nhv", u, S)

    def outer(u, w):
        return u[..., :, None] * w[..., None, :]

    def delta(S, k, v, beta):      # (I - β k kᵀ) S + β k vᵀ
        return S + beta[..., None, None] * outer(k, v - read(k, S))

    def decay(S, g):               # Diag(exp g) S, g per channel or scalar
        return S * (g.exp()[..., :, None] if g.dim() == 3 else g.exp()[..., None, None])

    q = tok["q"]
    if spec == "linear_attention":
        S = S + outer(tok["k"], tok["v"])
    elif spec == "deltanet":
        S = delta(S, tok["k"], tok["v"], tok["beta"])
    elif spec in ("gdn", "kda"):
        S = delta(decay(S, tok["g"]), tok["k"], tok["v"], tok["beta"])
    elif spec in ("gdn2", "qed"):
        k = tok["k"]
        if spec == "gdn2":
            a = tok["a"]
        else:
            bq = tok["b"] * q
            a = tok["b"] * k + tok["lam"][None, :, None] * (
                bq - k * (k * bq).sum(-1, keepdim=True))
        S = decay(S, tok["g"])
        S = S - outer(k, read(a, S)) + outer(k, tok["w"] * tok["v"])
    elif spec == "eda":
        e = tok["e"]
        S = decay(S, tok["g"])
        S = S - tok["gamma"][..., None, None] * outer(e, read(e, S))
        S = delta(S, tok["k"], tok["v"], tok["beta"])
    elif spec == "deltaproduct":
        S = decay(S, tok["g"])
        for j in range(tok["k"].shape[1]):
            S = delta(S, tok["k"][:, j], tok["v"][:, j], tok["beta"][:, j])
    elif spec == "comba":
        S = decay(S, tok["g"])
        S = S + tok["beta"][..., None, None] * outer(
            tok["k"], tok["v"] - read(tok["p"], S))
    elif spec == "dplr":           # b reads the state before the decay
        S = decay(S, tok["g"]) + outer(tok["a"], read(tok["b"], S)) + \
            outer(tok["k"], tok["v"])
    else:
        raise ValueError("no float64 reference for %r" % spec)
    return read(q * dk ** -0.5, S), S


def decode_reference(spec, x, initial):
    """One token (x: [N, 1, H, ...]) of the recurrence in float64 from
    `initial`: (o [N, 1, H, dv], final_state)."""
    f = {n: t.double() for n, t in x.items()}
    o, S = recurrence_step(spec, initial.double(), token_rows(spec, f, 0, 1))
    return o[:, None], S


def recurrence_reference(spec, x):
    """The whole of x ([B, T, H, ...]) in float64, token by token from a zero
    state: (o [B, T, H, dv], final_state [B, H, dk, dv]). MATH.md's bound is
    against this, on the very (rounded) inputs the kernel got."""
    f = {n: t.double() for n, t in x.items()}
    B, T, H, dk = f["q"].shape
    dv = f["v"].shape[-1]
    S = f["q"].new_zeros(B, H, dk, dv)
    o = f["q"].new_empty(B, T, H, dv)
    for t in range(T):
        o[:, t], S = recurrence_step(spec, S, token_rows(spec, f, t, T))
    return o, S


# ---------------------------------------------------------- measurement --

GPU_CYCLES_PER_MS = None


def gpu_cycles_per_ms():
    """The GPU's clock (what torch.cuda._sleep counts), in cycles a ms,
    measured once."""
    global GPU_CYCLES_PER_MS
    if GPU_CYCLES_PER_MS is None:
        cycles = 20_000_000
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        torch.cuda.synchronize()
        GPU_CYCLES_PER_MS = cycles / max(start.elapsed_time(end), 1e-3)
    return GPU_CYCLES_PER_MS


def measure(fn, rep_ms, warmup_ms):
    """CUDA-event times of `fn` in ms: the GPU's time, not the host's. Each
    call is enqueued while the GPU still waits (a spin of twice the host's
    time to enqueue one call, then the zeroing of a buffer larger than L2,
    as triton's do_bench flushes it), so that the events time the kernels
    alone: a reference whose Python enqueues its kernels more slowly than
    they run was otherwise timed at the host's pace (fla's GDN at 1.0 ms
    of which 0.49 ms were kernels, on a loaded host). The garbage collector
    is off while the repetitions are enqueued."""
    fn()
    torch.cuda.synchronize()
    begun = time.perf_counter()
    for _ in range(3):
        fn()
    host_ms = (time.perf_counter() - begun) * 1e3 / 3
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
    cover = int((2 * host_ms + 0.05) * gpu_cycles_per_ms())
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    collecting = gc.isenabled()
    gc.disable()
    try:
        for i in range(n):
            torch.cuda._sleep(cover)
            FLUSH.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
    finally:
        if collecting:
            gc.enable()
    return Timing([s.elapsed_time(e) for s, e in zip(starts, ends)])


def tensors_in(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in tensors_in(o)]
    return []


def nbytes(t):
    return t.numel() * t.element_size()


class StreamPool:
    """The stream-ordered memory pools a call may take memory from: the
    device's current one (cuMemAllocAsync) and the RKC runtime's workspace
    pool of each loaded rkc_torch library (its split kernels' workspace,
    freed on the stream after the scan, kept by the pool): the sum of their
    high-water marks of bytes in use since `reset`. Reads 0 where the
    driver's pool attributes cannot be reached."""
    USED_MEM_HIGH = 8   # CU_MEMPOOL_ATTR_USED_MEM_HIGH

    def __init__(self):
        self.lib = None
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            pass

    def pools(self):
        if not self.lib:
            return []
        pools = []
        device, pool = ctypes.c_int(), ctypes.c_void_p()
        if (self.lib.cuCtxGetDevice(ctypes.byref(device)) == 0 and
                self.lib.cuDeviceGetMemPool(ctypes.byref(pool), device) == 0):
            pools.append(pool)
        if rkc_torch is not None:
            from rkc_torch._library import loaded_libraries
            for lib in loaded_libraries():
                address = lib.memory_pool()
                if address:
                    pools.append(ctypes.c_void_p(address))
        return pools

    def reset(self):
        for pool in self.pools():
            zero = ctypes.c_uint64(0)
            self.lib.cuMemPoolSetAttribute(pool, self.USED_MEM_HIGH,
                                           ctypes.byref(zero))

    def peak(self):
        total = 0
        for pool in self.pools():
            value = ctypes.c_uint64(0)
            if self.lib.cuMemPoolGetAttribute(pool, self.USED_MEM_HIGH,
                                              ctypes.byref(value)) == 0:
                total += value.value
        return total


STREAM_POOL = None


def extra_memory(fn):
    """Bytes the call allocates beyond what was live before it and what it
    returns: the peak of torch's caching allocator (where fla's and
    rkc_torch's tensors live). Also the device memory taken outside that
    allocator: what the call leaves taken (a library's own cuMemAlloc, from
    cudaMemGetInfo), or the peak of the stream-ordered pools during the call
    (a workspace from cuMemAllocAsync or RKC's pool, freed before the call
    returns), whichever is larger."""
    global STREAM_POOL
    if STREAM_POOL is None:
        STREAM_POOL = StreamPool()
    gc.collect()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    reserved = torch.cuda.memory_reserved()
    free = torch.cuda.mem_get_info()[0]
    torch.cuda.reset_peak_memory_stats()
    STREAM_POOL.reset()
    out = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    pooled = STREAM_POOL.peak()
    storages = {}
    for t in tensors_in(out):   # a view counts as the whole of its storage
        storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        storages[storage.data_ptr()] = storage.nbytes()
    outside = (free - torch.cuda.mem_get_info()[0]) - (
        torch.cuda.memory_reserved() - reserved)
    del out
    return peak - before - sum(storages.values()), max(outside, pooled)


def rel(x, ref):
    """‖x - ref‖ / ‖ref‖ (Frobenius), in float64 on the device."""
    if tuple(x.shape) != tuple(ref.shape):
        raise ValueError("shape %s vs reference %s" % (tuple(x.shape), tuple(ref.shape)))
    x, ref = x.double(), ref.double()
    if not bool(torch.isfinite(x).all()):
        return float("inf")
    return ((x - ref).norm() / ref.norm().clamp_min(1e-300)).item()


def within_bound(err_o, err_s):
    return err_o <= BOUND and err_s <= BOUND


def check(row, case, out, ref):
    """Sets the row's errors (RKC against the reference) and, beyond BOUND,
    its status. fla's kernels are not exact either: where the two disagree,
    both are measured against the float64 recurrence (case.exact), and RKC
    within BOUND of it is ok, the status naming both sides' errors so that a
    reader sees which one is off."""
    row["err_o"], row["err_s"] = rel(out[0], ref[0]), rel(out[1], ref[1])
    if within_bound(row["err_o"], row["err_s"]):
        return
    if case.exact is None:       # the reference is the float64 recurrence
        row["status"] = "FAILED"
        return
    exact = case.exact()
    ours = (rel(out[0], exact[0]), rel(out[1], exact[1]))
    theirs = (rel(ref[0], exact[0]), rel(ref[1], exact[1]))
    verdict = "ok vs float64" if within_bound(*ours) else "FAILED"
    row["status"] = "%s (rkc err o %.1e state %.1e; %s err o %.1e state %.1e vs float64)" % (
        (verdict,) + ours + (case.label,) + theirs)


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


def new_row(section, spec, shape, args, label=""):
    """A row before its measurement: "ok" so far, or (logged) "not run"
    where --time-limit has passed."""
    row = {"section": section, "spec": spec, "shape": shape, "status": "ok",
           "label": label, "note": "", "err_o": None, "err_s": None,
           "rkc": None, "fla": None, "bytes": None, "mem_rkc": None,
           "mem_fla": None}
    if args.time_limit and time.time() - STARTED > args.time_limit:
        row["status"] = "not run: past --time-limit"
        log(row)
    return row


def run_row(section, spec, shape, make_case, args, compile_errors):
    row = new_row(section, spec, shape, args)
    if row["status"] != "ok":
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
        check(row, case, out, ref)
        out = ref = None
        gc.collect()
        torch.cuda.empty_cache()   # the float64 evaluation's, if there was one
        if row["status"].startswith("ok"):
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


def run_tune(spec, shape, args, out):
    """`rkc tune` on the spec at the shape, from an empty database of this
    run's own (OUT's name with .tuning/SPEC.jsonl, an earlier one there
    replaced: the run is measured whole; never a database the repository
    keeps or the compile options name), as a row of section "tune": its wall
    time, and what the database says of the default schedule and the
    winner."""
    row = new_row("tune", spec, shape, args, label="rkc tune")
    if row["status"] != "ok":
        return row

    def ended(status):
        row["status"] = status
        log(row)
        return row
    out_folder = os.path.dirname(out)
    folder = os.path.splitext(out)[0] + ".tuning"
    db = os.path.join(folder, spec + ".jsonl")
    winners = os.path.join(folder, spec + ".winners.md")
    if os.path.abspath(db) in (os.path.abspath(w) for w in
                               args.compile_options.split()):
        return ended("error: the tune's database %s is in --compile-options" % db)
    os.makedirs(folder, exist_ok=True)
    for path in (db, winners):
        if os.path.exists(path):
            os.remove(path)
    B, T, H, D = shape
    command = [os.path.abspath(args.rkc), "tune",
               os.path.join(ROOT, "examples", "specs", spec + ".mlir"),
               "--shape", "B=%d,T=%d,H=%d" % (B, T, H), "--dk", str(D),
               "--dv", str(D), "--db", db, "--winners", winners]
    print("running %s" % " ".join(shown_path(c) if os.path.isabs(c) else c
                                  for c in command), file=sys.stderr, flush=True)
    start = time.time()
    tail = []
    try:
        # Its progress relayed as it comes (a few minutes of it).
        with subprocess.Popen(command, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              errors="replace") as tune:
            for line in tune.stdout:
                print("    " + line.rstrip(), file=sys.stderr, flush=True)
                tail = (tail + [line.rstrip()])[-6:]
        returncode = tune.returncode
    except OSError as e:
        return ended("error: " + one_line(e))
    wall = time.time() - start
    if returncode != 0:
        return ended("error: rkc tune exited with %d: %s" % (
            returncode, (tail[-1] if tail else "")[:200]))
    try:
        with open(db) as f:
            text = f.read()
    except OSError as e:   # not a verdict: a later --resume runs it again
        return ended("error: " + one_line(e))
    try:
        summary = tune_summary(text)
    except ValueError as e:
        return ended("FAILED (%s)" % str(e)[:200])
    w = summary["winner"]
    row["rkc"] = Timing.from_json({"n": w["reps"], "median": w["median"],
                                   "p20": w["p20"], "p80": w["p80"]})
    # (Paths as the report beside them links them.)
    row["tune"] = dict(summary, wall_s=wall, db=os.path.relpath(db, out_folder),
                       winners=os.path.relpath(winners, out_folder))
    log(row)
    return row


def log(row):
    parts = ["%4.0f s [%s]" % (time.time() - STARTED, row["section"]),
             row["spec"], shape_text(row["shape"])]
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

def warm_fla(spec, prefill_shapes, decode_shapes):
    """Calls fla's side of the spec's rows once, untimed: triton compiles
    each kernel's autotuning candidates (about a minute a spec) into its disk
    cache, which the measuring process then reads. The choices among them
    are not kept (FLA_CACHE_RESULTS=0, set by main()): these children run at
    once on one GPU, where their timings would be each other's."""
    for shape in prefill_shapes:
        prefill_case(spec, *shape, seed=0).fla()
    for shape in decode_shapes:
        case = decode_case(spec, *shape, seed=0)
        if case.fla:
            case.fla()
    torch.cuda.synchronize()


def precompile(specs, dims, python_dir, warm_args):
    """Builds every spec's library at once, in child processes: rkc_torch
    builds one spec at a time within a process, and nvcc takes ~20-60 s a
    spec. The children fill rkc_torch's disk cache; this process then loads
    from it. Children running `warm_args + [spec]` warm fla's kernels
    alongside (their failures are the rows' to report). Returns {spec:
    error} for the specs that did not build."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from rkc_torch._library import library; "
            "library(sys.argv[2], int(sys.argv[3]), int(sys.argv[3]), "
            "tuple(sys.argv[4:]))")
    jobs, warming = [], []
    for spec in specs:
        for dim in dims:
            cmd = [sys.executable, "-c", code, python_dir, spec, str(dim)]
            jobs.append((spec, subprocess.Popen(
                cmd + list(PARAMS.get(spec, ())), stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True)))
        if warm_args:
            warming.append(subprocess.Popen(
                warm_args + [spec], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
    errors = {}
    deadline = time.time() + 1200
    for p in warming:
        try:
            p.wait(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
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

def git(folder, *cmd):
    r = subprocess.run(["git", "-C", folder] + list(cmd), capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def module_version(name):
    """A module's __version__, or "?" where it does not import."""
    try:
        return importlib.import_module(name).__version__
    except Exception:
        return "?"


def machine_info(args, fla_root):
    info = [("GPU", torch.cuda.get_device_name())]
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                            "--format=csv,noheader"], capture_output=True, text=True)
        driver = r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "?"
    except OSError:
        driver = "?"
    info.append(("driver", driver))
    info.append(("torch / CUDA / triton", "%s / %s / %s" % (
        torch.__version__, torch.version.cuda, module_version("triton"))))
    info.append(("rkc commit", rkc_commit(args)))
    info.append(("rkc binary", shown_path(args.rkc)))
    info.append(("rkc compile options", args.compile_options or "(the defaults)"))
    info.append(("fla", "%s (version %s, commit %s)" % (
        shown_path(fla_root), module_version("fla"),
        fla_commit(args, fla_root) or "unknown: not a git checkout")))
    info.append(("date", datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")))
    return info


def rkc_commit(args):
    """The rkc commit the report names: --commit, else the checkout's."""
    commit = args.commit or git(ROOT, "rev-parse", "--short", "HEAD") or "?"
    if not args.commit and git(ROOT, "status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    return commit


def fla_commit(args, fla_root):
    """fla's commit: --fla-commit, else the checkout's where --fla is the top
    of one (not a folder inside another repository), else None."""
    if args.fla_commit:
        return args.fla_commit
    top = git(fla_root, "rev-parse", "--show-toplevel")
    if top and os.path.realpath(top) == os.path.realpath(fla_root):
        return git(fla_root, "rev-parse", "--short", "HEAD")
    return None


def run_identity(args):
    """What rows of another run must share with this one (report.RUN_IDENTITY):
    besides the commits (which a modified checkout or --commit can blur) the
    rkc binary's hash, fla's and the libraries' versions, and the method's
    arguments."""
    digest = hashlib.sha256()
    with open(args.rkc, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"gpu": torch.cuda.get_device_name(), "rkc_commit": rkc_commit(args),
            "rkc_binary": digest.hexdigest()[:16],
            "fla_commit": fla_commit(args, fla_path(args.fla)),
            "versions": "fla %s, torch %s, CUDA %s, triton %s" % (
                module_version("fla"), torch.__version__, torch.version.cuda,
                module_version("triton")),
            "compile_options": args.compile_options,
            "method": "seed %d, rep %g ms, warm-up %g ms" % (
                args.seed, args.rep_ms, args.warmup_ms)}


def add_source_arguments(parser):
    """--rkc and --fla, which every script setting RKC beside fla takes."""
    parser.add_argument("--rkc", required=True, help="the rkc binary")
    parser.add_argument("--fla", required=True,
                        help="folder holding a copy of fla's fla/ package")


def parse_specs(parser, text):
    """The comma-separated specs of `text`, each one of SPECS (else a usage
    error)."""
    specs = [s for s in text.split(",") if s]
    unknown = [s for s in specs if s not in SPECS]
    if unknown or not specs:
        parser.error("unknown spec(s) %s; known: %s" % (
            ", ".join(unknown) or "(none given)", ", ".join(SPECS)))
    return specs


def fla_path(fla):
    """The folder to put on sys.path for `--fla`: the folder given, or its
    parent where it is the fla package itself."""
    root = os.path.abspath(fla)
    if os.path.basename(root) == "fla" and os.path.exists(
            os.path.join(root, "__init__.py")):
        root = os.path.dirname(root)
    return root


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(parser)
    parser.add_argument("--out", default="BENCHMARKS.md")
    parser.add_argument("--plots", default="bench/plots",
                        help="folder of the SVG plots, relative to --out's folder")
    parser.add_argument("--specs", default=",".join(SPECS))
    parser.add_argument("--compile-options", default="",
                        help="extra rkc compile options for RKC's kernels, "
                             "e.g. '--split-scan 1' (shown in the report)")
    parser.add_argument("--quick", action="store_true",
                        help="first prefill shape, T up to 8192, first decode shape")
    parser.add_argument("--commit", help="rkc commit to report (default: git HEAD)")
    parser.add_argument("--fla-commit", help="fla commit to report, if --fla is no git checkout")
    parser.add_argument("--seed", type=int, default=1,
                        help="inputs of row i drawn with seed 1000 * SEED + 1 + i")
    parser.add_argument("--rep-ms", type=float, default=200.0,
                        help="time spent in timed repetitions, per side (10 to 200 of them)")
    parser.add_argument("--warmup-ms", type=float, default=30.0)
    parser.add_argument("--sections", default="prefill,decode,sweep,tune",
                        help="which tables to measure (the others are left "
                             "out of the report); tune runs `rkc tune` on eda "
                             "(a few minutes)")
    parser.add_argument("--time-limit", type=float, default=0,
                        help="seconds: rows not started by then are reported "
                             "as not run (the report is still written)")
    parser.add_argument("--rows", metavar="PATH",
                        help="the run's rows as JSON lines, rewritten after "
                             "every row (default: --out with .rows.jsonl for .md)")
    parser.add_argument("--resume", metavar="PATH",
                        help="an earlier run's --rows (same commits, rkc "
                             "binary, versions, GPU, compile options, seed and "
                             "times): its measured rows are taken as they are "
                             "and only the rest are measured")
    parser.add_argument("--require-gpu", metavar="TEXT",
                        help="exit (status 3) before any work unless the "
                             "GPU's name contains TEXT (any case), e.g. H200: "
                             "the targets are one card's")
    parser.add_argument("--warm-fla", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args()

    sections = [s for s in args.sections.split(",") if s]
    unknown_sections = [s for s in sections
                        if s not in ("prefill", "decode", "sweep", "tune")]
    if unknown_sections or not sections:
        parser.error("--sections takes prefill, decode, sweep and tune, got %r" %
                     args.sections)
    specs = parse_specs(parser, args.specs)
    rows_path = args.rows or os.path.splitext(os.path.abspath(args.out))[0] + ".rows.jsonl"
    if args.resume and os.path.abspath(args.resume) == os.path.abspath(rows_path):
        parser.error("--resume %s is also this run's --rows; give --rows "
                     "another path" % args.resume)
    resume_text = None
    if args.resume:
        try:
            with open(args.resume) as f:
                resume_text = f.read()
        except OSError as e:
            parser.error("--resume: %s" % e)
    if not torch.cuda.is_available():
        sys.exit("benchmark.py: no CUDA device")
    if (args.require_gpu and
            args.require_gpu.lower() not in torch.cuda.get_device_name().lower()):
        print("benchmark.py: the GPU is %s, not %s (--require-gpu): nothing run"
              % (torch.cuda.get_device_name(), args.require_gpu), file=sys.stderr)
        sys.exit(3)
    fla_root = fla_path(args.fla)
    python_dir = os.path.join(ROOT, "python")
    sys.path.insert(0, python_dir)
    sys.path.insert(0, fla_root)
    os.environ["RKC"] = os.path.abspath(args.rkc)
    os.environ["RKC_COMPILE_OPTIONS"] = args.compile_options
    # fla keeps its autotuning choices on disk (FLA_CACHE_RESULTS, default
    # 1), and precompile()'s children warm every spec at once on the one
    # GPU: choices timed among each other's kernels, then read back here,
    # once made fla's DPLR kernel twice as slow as it is. The children
    # compile only; fla autotunes in this process, alone on the GPU, in the
    # untimed first call of each row.
    os.environ["FLA_CACHE_RESULTS"] = "0"
    prefill_shapes = PREFILL_SHAPES[:1] if args.quick else PREFILL_SHAPES
    sweep_ts = [t for t in SWEEP_T if t <= 8192] if args.quick else SWEEP_T
    decode_shapes = DECODE_SHAPES[:1] if args.quick else DECODE_SHAPES
    if args.warm_fla:   # a child of precompile(): fla's side only, of the
        # tables measured (the sweep's kernels are the prefill shapes' ones)
        with torch.inference_mode():
            warm_fla(args.warm_fla,
                     prefill_shapes if {"prefill", "sweep"} & set(sections) else [],
                     decode_shapes if "decode" in sections else [])
        return
    global rkc_torch, rkc_library, FLUSH
    import rkc_torch as _rkc_torch
    from rkc_torch._library import library
    rkc_torch, rkc_library = _rkc_torch, library
    dims = sorted({s[3] for s in prefill_shapes} | {s[2] for s in decode_shapes} |
                  ({SWEEP_D} if any(s in specs for s in SWEEP_SPECS) else set()))

    identity = run_identity(args)
    resumed = {}
    if resume_text is not None:
        def warn(message):
            print("--resume %s: %s" % (args.resume, message), file=sys.stderr,
                  flush=True)
        try:
            resumed = resumable(identity, *rows_from_json(resume_text, warn))
        except ValueError as e:
            sys.exit("benchmark.py: --resume %s: %s" % (args.resume, e))
        print("resuming %d measured rows of %s" % (len(resumed), args.resume),
              file=sys.stderr, flush=True)
    planned = planned_rows(specs, sections, prefill_shapes, decode_shapes, sweep_ts)

    def earlier(section, spec, shape):
        """The row the run resumed has for this one, or None: a sweep row at
        a prefill shape is that prefill row."""
        row = resumed.get((section, spec, shape))
        if row is None and section == "T sweep":
            row = resumed.get(("prefill", spec, shape))
        return row
    # (The tune row compiles its own candidates.)
    pending = [s for s in specs if any(
        spec == s and section != "tune" and earlier(section, spec, shape) is None
        for spec, section, shape in planned)]

    global STARTED
    started = STARTED = time.time()
    print("compiling %s (d = %s) ..." % (", ".join(pending) or "nothing", dims),
          file=sys.stderr, flush=True)
    warm_args = [sys.executable, os.path.abspath(__file__), "--rkc", args.rkc,
                 "--fla", fla_root, "--sections", args.sections] + (
                 ["--quick"] if args.quick else []) + ["--warm-fla"]
    compile_errors = precompile(pending, dims, python_dir, warm_args)
    print("compiled in %.0f s%s" % (time.time() - started, "".join(
        "; %s: %s" % kv for kv in compile_errors.items())), file=sys.stderr, flush=True)

    prefill, sweep, decode, tune, done = [], [], [], [], {}
    out = os.path.abspath(args.out)

    with torch.inference_mode():
        FLUSH = torch.empty(512 << 20, dtype=torch.int8, device="cuda")
        copy_gbs = copy_bandwidth(args.rep_ms, args.warmup_ms)
        torch.cuda.empty_cache()
        print("device copy bandwidth %.0f GB/s" % copy_gbs, file=sys.stderr, flush=True)

        def row_of(section, spec, shape, make_case, run=None):
            """The row measured (by run_row, or `run`), or taken from the run
            resumed; the rows so far saved either way, so that a run cut
            short can be resumed."""
            row = earlier(section, spec, shape)
            if row is not None:
                row = dict(row, resumed=True)
                log(row)
            elif run:
                row = run()
            else:
                row = run_row(section, spec, shape, make_case, args, compile_errors)
                row["copy_gbs"] = copy_gbs
            saved.append(row)
            # Written aside, then renamed over the file: a run killed while
            # writing leaves the last whole file, never a cut one.
            with open(rows_path + ".partial", "w") as f:
                f.write(rows_json(identity, saved))
            os.replace(rows_path + ".partial", rows_path)
            return row

        # A row's seed is its place in the run, whichever rows are resumed.
        saved = []
        for i, (spec, section, shape) in enumerate(planned):
            seed = args.seed * 1000 + 1 + i
            if section == "prefill":
                row = row_of(section, spec, shape,
                             lambda: prefill_case(spec, *shape, seed))
                prefill.append(row)
                done[(spec, shape)] = row
            elif section == "decode":
                decode.append(row_of(section, spec, shape,
                                     lambda: decode_case(spec, *shape, seed)))
            elif section == "tune":
                tune.append(row_of(section, spec, shape, None, lambda: run_tune(
                    spec, shape, args, out)))
            else:
                row = done.get((spec, shape))   # a prefill shape: measured already
                if row is None:
                    row = row_of(section, spec, shape,
                                 lambda: prefill_case(spec, *shape, seed))
                sweep.append(row)
        FLUSH = None

    plots_dir = os.path.join(os.path.dirname(out), args.plots)
    text = write_report(out, plots_dir, args, machine_info(args, fla_root), copy_gbs,
                        specs, prefill, sweep, decode, tune)
    print("wrote %s, %s and %s in %.0f s" % (out, plots_dir, rows_path,
                                              time.time() - started),
          file=sys.stderr, flush=True)
    print(text)


if __name__ == "__main__":
    main()
