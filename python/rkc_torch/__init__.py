"""RKC's kernels as PyTorch custom ops, with flash-linear-attention's calling
conventions: ``[B, T, H, D]`` tensors, ``scale``, ``initial_state``,
``output_final_state``, ``cu_seqlens``, ``use_qk_l2norm_in_kernel``; every op
returns ``(o, final_state)`` (``final_state`` is ``None`` unless asked for).

    from rkc_torch import chunk_kda          # in place of fla.ops.kda's
    o, state = chunk_kda(q, k, v, g, beta, initial_state=h0, output_final_state=True)

Kernels are compiled by the ``rkc`` binary (``$RKC``, else ``rkc`` on PATH)
with nvcc the first time a spec is used at a (dk, dv), and cached under
``$RKC_CACHE_DIR`` or ``~/.cache/rkc/torch``; with ``$RKC_TUNING`` naming a
database of ``rkc tune``, they are compiled with ``rkc compile --tuning`` and
dispatch by shape bucket to the measured winners; ``$RKC_COMPILE_OPTIONS``
adds options to every ``rkc compile`` (e.g. ``--split-scan 1``). The ops are registered with
``torch.library`` (with fake implementations, so ``torch.compile`` traces
them) and never synchronise the host, so they can be captured in CUDA graphs
once warmed up.

The prefill's workspace comes from the runtime's own stream-ordered pool,
outside torch's allocator; the pool keeps that memory from one call to the
next (so a call is not slowed by mapping it again after a synchronisation).
``rkc_torch.release_memory()`` hands it back.
"""
from ._library import release_memory
from ._ops import (chunk_comba, chunk_delta_rule, chunk_deltaproduct,
                   chunk_dplr, chunk_eda, chunk_gated_delta_rule, chunk_gdn2,
                   chunk_kda, chunk_linear_attention, chunk_qed, recurrence)

__all__ = ["chunk_comba", "chunk_delta_rule", "chunk_deltaproduct",
           "chunk_dplr", "chunk_eda", "chunk_gated_delta_rule", "chunk_gdn2",
           "chunk_kda", "chunk_linear_attention", "chunk_qed", "recurrence",
           "release_memory"]
