"""The custom op and flash-linear-attention-style entry points."""
import re
from typing import List, Optional, Tuple

import torch

from ._library import library, spec_source

_FLOATS = (torch.float32, torch.bfloat16, torch.float16)
_INPUT = re.compile(
    r'rec\.input\s+"([^"]+)"\s*:\s*!rec\.(key|value|scalar)(?:<(\w+)>)?')


def _parse_inputs(spec):
    """(name, side, rate) of each input, in the spec's order."""
    return tuple((n, side, rate or "token")
                 for n, side, rate in _INPUT.findall(spec_source(spec)))


# Read once at import, so that torch.compile traces plain lookups.
_KNOWN = {name: _parse_inputs(name) for name in (
    "kda", "kda_l2norm", "gdn", "gdn_l2norm", "deltanet", "linear_attention",
    "gdn2", "qed", "eda", "comba", "dplr", "deltaproduct")}


def _spec_inputs(spec):
    inputs = _KNOWN.get(spec)
    return inputs if inputs is not None else _parse_inputs(spec)


@torch.library.custom_op("rkc::recurrence", mutates_args=(),
                         device_types="cuda")
def _recurrence(spec: str, params: str, inputs: List[torch.Tensor],
                o_shape: List[int], state_shape: List[int], value_index: int,
                scale: float, initial_state: Optional[torch.Tensor],
                output_final_state: bool,
                cu_seqlens: Optional[torch.Tensor],
                cu_seqlens_cpu: Optional[torch.Tensor]) -> Tuple[torch.Tensor,
                                                                 torch.Tensor]:
    device = inputs[0].device
    with torch.cuda.device(device):
        lib = library(spec, state_shape[2], state_shape[3],
                      tuple(p for p in params.split(",") if p), device)
        o = torch.empty(o_shape, dtype=inputs[value_index].dtype, device=device)
        final = torch.empty(state_shape if output_final_state else (0,),
                            dtype=torch.float32, device=device)
        if initial_state is not None:
            initial_state = initial_state.to(
                device=device, dtype=torch.float32).contiguous()
        lib.call("prefill", torch.cuda.current_stream(device).cuda_stream,
                 inputs, o, initial_state,
                 final if output_final_state else None, cu_seqlens,
                 cu_seqlens_cpu, scale=scale)
    return o, final


@_recurrence.register_fake
def _(spec, params, inputs, o_shape, state_shape, value_index, scale,
      initial_state, output_final_state, cu_seqlens, cu_seqlens_cpu):
    o = inputs[value_index].new_empty(o_shape)
    final = inputs[0].new_empty(state_shape if output_final_state else (0,),
                                dtype=torch.float32)
    return o, final


def recurrence(spec, inputs, scale=None, initial_state=None,
               output_final_state=False, cu_seqlens=None, params=(),
               cu_seqlens_cpu=None):
    """Runs the prefill kernel of `spec` (an example spec's name, or one of
    the package's) on `inputs`, a dict by the spec's input names.

    cu_seqlens is checked on the host (0 first, non-decreasing, T last) from
    `cu_seqlens_cpu` when given, else from a copy taken in eager mode; under
    CUDA graph capture or torch.compile pass `cu_seqlens_cpu` to have it
    checked."""
    described = _spec_inputs(spec)
    names = [n for n, _, _ in described]
    for n in inputs:
        if n not in names:
            raise ValueError("%s: unexpected input %r (the spec takes %s)" % (
                spec, n, ", ".join(names)))
    tensors = []
    for n, side, rate in described:
        t = inputs.get(n)
        if t is None:
            raise ValueError("%s: missing input %r" % (spec, n))
        if not isinstance(t, torch.Tensor) or t.device.type != "cuda":
            raise ValueError("%s: %r must be a CUDA tensor" % (spec, n))
        if t.dtype not in _FLOATS:
            raise ValueError("%s: %r has dtype %s; expected float32, bfloat16 "
                             "or float16" % (spec, n, t.dtype))
        expected_rank = (1 if rate == "head" else 3) + (side != "scalar")
        if t.dim() != expected_rank:
            raise ValueError("%s: %r has shape %s; expected rank %d" % (
                spec, n, tuple(t.shape), expected_rank))
        tensors.append(t)
    device = tensors[0].device
    for n, t in zip(names, tensors):
        if t.device != device:
            raise ValueError("%s: %r is on %s, not %s" % (spec, n, t.device,
                                                          device))

    def dim(side):
        for (n, s, _), t in zip(described, tensors):
            if s == side:
                return t.shape[-1]
        raise ValueError("%s has no %s-side input" % (spec, side))

    dk, dv = dim("key"), dim("value")
    token = [t for (_, _, r), t in zip(described, tensors) if r == "token"]
    B, T = token[0].shape[0], token[0].shape[1]
    heads = [t.shape[0 if r == "head" else 2]
             for (_, _, r), t in zip(described, tensors)]
    HV = max(heads)
    if cu_seqlens is not None:
        if cu_seqlens.dtype != torch.int64 or cu_seqlens.dim() != 1:
            raise ValueError("cu_seqlens must be a 1-D int64 tensor")
        if cu_seqlens.device != device:
            raise ValueError("cu_seqlens must be on %s" % device)
        if B != 1:
            raise ValueError("cu_seqlens packs sequences into one batch row, "
                             "but B = %d" % B)
        cu_seqlens = cu_seqlens.contiguous()
        if cu_seqlens_cpu is None and not torch.compiler.is_compiling() and \
                not torch.cuda.is_current_stream_capturing():
            cu_seqlens_cpu = cu_seqlens.cpu()
        if cu_seqlens_cpu is not None:
            cu_seqlens_cpu = cu_seqlens_cpu.to(torch.int64).contiguous()
        N = cu_seqlens.numel() - 1
    else:
        N = B
    if scale is not None and not scale > 0:
        raise ValueError("scale must be positive, got %r" % scale)
    if initial_state is not None and initial_state.device != device:
        raise ValueError("initial_state is on %s, not %s" % (
            initial_state.device, device))
    if initial_state is not None and tuple(initial_state.shape) != (N, HV, dk, dv):
        raise ValueError("initial_state has shape %s; expected [N, HV, dk, dv]"
                         " = %s" % (tuple(initial_state.shape), (N, HV, dk, dv)))
    value_index = [s for _, s, _ in described].index("value")
    o, final = torch.ops.rkc.recurrence(
        spec, ",".join(params), tensors, [B, T, HV, dv], [N, HV, dk, dv],
        value_index, float(scale or 0.0), initial_state, output_final_state,
        cu_seqlens, cu_seqlens_cpu)
    return o, (final if output_final_state else None)


def _no(kwargs, what):
    """fla options this version does not implement: refuse them clearly."""
    for key, value in kwargs.items():
        if value not in (None, False):
            raise NotImplementedError("rkc_torch.%s: %s=%r is not supported "
                                      "(yet)" % (what, key, value))


def chunk_kda(q, k, v, g, beta, scale=None, initial_state=None,
              output_final_state=False, use_qk_l2norm_in_kernel=False,
              use_gate_in_kernel=False, use_beta_sigmoid_in_kernel=False,
              allow_neg_eigval=False, safe_gate=False, lower_bound=None,
              disable_recompute=False, return_intermediate_states=False,
              state_v_first=False, cu_seqlens=None, cu_seqlens_cpu=None,
              cp_context=None, **kwargs):
    """fla.ops.kda.chunk_kda, argument for argument:
    S = (I - β k kᵀ) Diag(exp g) S + β k vᵀ. (disable_recompute concerns
    the backward pass and is ignored.)"""
    _no(dict(kwargs, use_gate_in_kernel=use_gate_in_kernel,
             use_beta_sigmoid_in_kernel=use_beta_sigmoid_in_kernel,
             allow_neg_eigval=allow_neg_eigval, safe_gate=safe_gate,
             lower_bound=lower_bound,
             return_intermediate_states=return_intermediate_states,
             state_v_first=state_v_first, cp_context=cp_context), "chunk_kda")
    spec = "kda_l2norm" if use_qk_l2norm_in_kernel else "kda"
    return recurrence(spec, dict(q=q, k=k, v=v, g=g, beta=beta), scale,
                      initial_state, output_final_state, cu_seqlens,
                      cu_seqlens_cpu=cu_seqlens_cpu)


def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None,
                           output_final_state=False,
                           use_qk_l2norm_in_kernel=False,
                           use_beta_sigmoid_in_kernel=False,
                           allow_neg_eigval=False, state_v_first=False,
                           cu_seqlens=None, cu_seqlens_cpu=None,
                           chunk_indices=None, cp_context=None, **kwargs):
    """fla.ops.gated_delta_rule.chunk_gated_delta_rule, argument for
    argument (GDN). chunk_indices is fla's own tiling and is ignored."""
    _no(dict(kwargs, use_beta_sigmoid_in_kernel=use_beta_sigmoid_in_kernel,
             allow_neg_eigval=allow_neg_eigval, state_v_first=state_v_first,
             cp_context=cp_context), "chunk_gated_delta_rule")
    spec = "gdn_l2norm" if use_qk_l2norm_in_kernel else "gdn"
    return recurrence(spec, dict(q=q, k=k, v=v, g=g, beta=beta), scale,
                      initial_state, output_final_state, cu_seqlens,
                      cu_seqlens_cpu=cu_seqlens_cpu)


def chunk_delta_rule(q, k, v, beta, scale=None, initial_state=None,
                     output_final_state=False, cu_seqlens=None, **kwargs):
    """DeltaNet: S = (I - β k kᵀ) S + β k vᵀ."""
    _no(kwargs, "chunk_delta_rule")
    return recurrence("deltanet", dict(q=q, k=k, v=v, beta=beta), scale,
                      initial_state, output_final_state, cu_seqlens)


def chunk_linear_attention(q, k, v, scale=None, initial_state=None,
                           output_final_state=False, cu_seqlens=None,
                           **kwargs):
    """Linear attention: S = S + k vᵀ."""
    _no(kwargs, "chunk_linear_attention")
    return recurrence("linear_attention", dict(q=q, k=k, v=v), scale,
                      initial_state, output_final_state, cu_seqlens)


def chunk_gdn2(q, k, v, g, a, w, scale=None, initial_state=None,
               output_final_state=False, cu_seqlens=None, **kwargs):
    """GDN-2: S = (I - k aᵀ) Diag(exp g) S + k (w ⊙ v)ᵀ."""
    _no(kwargs, "chunk_gdn2")
    return recurrence("gdn2", dict(q=q, k=k, v=v, g=g, a=a, w=w), scale,
                      initial_state, output_final_state, cu_seqlens)


def chunk_qed(q, k, v, g, b, w, lam, scale=None, initial_state=None,
              output_final_state=False, cu_seqlens=None, **kwargs):
    """QED: GDN-2 with a = b ⊙ k + λ P⊥_k(b ⊙ q)."""
    _no(kwargs, "chunk_qed")
    return recurrence("qed", dict(q=q, k=k, v=v, g=g, b=b, w=w, lam=lam),
                      scale, initial_state, output_final_state, cu_seqlens)


def chunk_eda(q, k, v, g, beta, e, gamma, scale=None, initial_state=None,
              output_final_state=False, cu_seqlens=None, **kwargs):
    """EDA: S = (I - β k kᵀ)(I - γ e eᵀ) Diag(exp g) S + β k vᵀ."""
    _no(kwargs, "chunk_eda")
    return recurrence("eda", dict(q=q, k=k, v=v, g=g, beta=beta, e=e,
                                  gamma=gamma), scale, initial_state,
                      output_final_state, cu_seqlens)


def chunk_comba(q, k, v, p, g, beta, scale=None, initial_state=None,
                output_final_state=False, cu_seqlens=None, **kwargs):
    """Comba: S = (I - β k pᵀ) exp(g) S + β k vᵀ."""
    _no(kwargs, "chunk_comba")
    return recurrence("comba", dict(q=q, k=k, v=v, p=p, g=g, beta=beta),
                      scale, initial_state, output_final_state, cu_seqlens)


def chunk_dplr(q, k, v, a, b, g, scale=None, initial_state=None,
               output_final_state=False, cu_seqlens=None, **kwargs):
    """DPLR (RWKV-7 family): S = (Diag(exp g) + a bᵀ) S + k vᵀ."""
    _no(kwargs, "chunk_dplr")
    return recurrence("dplr", dict(q=q, k=k, v=v, a=a, b=b, g=g), scale,
                      initial_state, output_final_state, cu_seqlens)


def chunk_deltaproduct(q, k, v, beta, g, n=2, scale=None, initial_state=None,
                       output_final_state=False, cu_seqlens=None, **kwargs):
    """DeltaProduct: decay once, then n delta sub-steps a token (k, v, beta
    have n rows a token)."""
    _no(kwargs, "chunk_deltaproduct")
    return recurrence("deltaproduct", dict(q=q, k=k, v=v, beta=beta, g=g),
                      scale, initial_state, output_final_state, cu_seqlens,
                      params=("n=%d" % n,))
