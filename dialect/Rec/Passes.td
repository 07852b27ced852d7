//===- Passes.td - Passes of the rec dialect ---------------*- tablegen -*-===//

#ifndef REC_PASSES_TD
#define REC_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecNormalize : Pass<"rec-normalize", "::mlir::ModuleOp"> {
  let summary = "Simplify prologue expressions and put factors in canonical order";
  let description = [{
    Folds what does nothing (a decay by a zero gate, a factor of zero
    strength, a product with one, a sum with zero), merges adjacent decays
    into one, and moves scalar decays in front of the rank-1 factors they
    commute with, so that every later stage sees one decay per sub-step and
    that decay first.
  }];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

def RecInterleave : Pass<"rec-interleave", "::mlir::ModuleOp"> {
  let summary = "Turn each token's factors into generalized DPLR sub-steps";
  let description = [{
    Replaces every `rec.step` by a `rec.interleaved` table of
    `rec.substep`s, each `S ← (Diag(exp g) + a bᵀ) S + k vᵀ` tagged with its
    structure. A decay joins the rank-1 factor after it (whose read vector
    then carries the decay), a write joins the factor before it, and a
    `rec.repeat` is unrolled with its count (from the recurrence's
    `params`, or the `params` option). EDA becomes an erase sub-step
    (decay, no write, not read) and a delta sub-step (write, read);
    DeltaProduct n sub-steps with the decay on the first only.
  }];
  let options = [
    ListOption<"params", "params", "std::string",
               "Parameter overrides, name=value (e.g. n=3)">
  ];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

def RecChunk : Pass<"rec-chunk", "::mlir::ModuleOp"> {
  let summary = "Lower sub-steps to the chunked WY/UT algorithm on tiles";
  let description = [{
    Replaces a `rec.interleaved` table by `rec.chunked`: the table, and a
    per-chunk body of `rec.chunk.*` ops (gate cumulative sums, masked
    decay-weighted Gram products, the UT inverse, the WY products, the
    output and the state carried to the next chunk). The body is specialised
    on the structure tags: no gate work without decay, per-row scalars for
    scalar decays, one Gram product where the factors are symmetric and
    write along their erase direction, value products on the writing rows
    only, and outputs on the reading rows only. Chunks hold `chunk-size`
    tokens (chunk-size · m sub-step rows), so they never split a token.
  }];
  let options = [
    Option<"chunkSize", "chunk-size", "int64_t", "64",
           "Tokens per chunk (a positive integer)">
  ];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

def RecFactorProducts : Pass<"rec-factor-products", "::mlir::ModuleOp"> {
  let summary = "Sum the right operands of products that share their left one";
  let description = [{
    In a `rec.chunked` body, a sum (a tree of `rec.chunk.add`) of products
    read by nothing else that share their left operand (and whether it is
    transposed) becomes one product of the sum of their right operands:
    A X + A Y → A (X + Y). The new sum gathers the right operands' own
    sums, the terms independent of the entering state first, so that their
    partial sum is a state-free value (after --rec-split-scan, one prep
    value). For a delta factor, the output's A_qk U' + A_qk V and the state
    update's K̃ᵀ U' + K̃ᵀ V each become one product of U' + V, where
    U' + V = W S + (U + V): half the multiplications, and the value rows no
    longer reach the scan.
  }];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

def RecSinkRowScales : Pass<"rec-sink-row-scales", "::mlir::ModuleOp"> {
  let summary = "Move row scalings off products' left operands";
  let description = [{
    In a `rec.chunked` body, a product whose left operand scales each row of
    a tile by one scalar (`rec.chunk.scale_rows`, or `decay_rows` /
    `decay_to_end` with a scalar gate) scales elsewhere instead:
    diag(c) A · B becomes diag(c) (A B), and (diag(c) A)ᵀ B becomes
    Aᵀ (diag(c) B). For a scalar-gate delta factor the output's Q̃ S and the
    state update's K̂ᵀ X then read the rows of q and k as they are, which a
    split scan can load itself, and the scalings fall on chunk x value
    tiles. A scaling left without readers goes.
  }];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

def RecDecode : Pass<"rec-decode", "::mlir::ModuleOp"> {
  let summary = "Lower sub-steps to a one-token state update for decoding";
  let description = [{
    Replaces a `rec.interleaved` table by `rec.decode`: the same sub-steps,
    applied to a given state one new token at a time.
  }];
  let options = [
    Option<"tokens", "tokens", "int64_t", "1",
           "New tokens per call (a positive integer)">
  ];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

def RecStateTransfer : Pass<"rec-state-transfer", "::mlir::ModuleOp"> {
  let summary = "Write each chunk as an affine map of the state entering it";
  let description = [{
    Every value of a chunk body that depends on the entering state S₀ is
    linear in it: v = A_v S₀ + B_v. This pass computes the coefficients
    A_v and B_v with state-independent ops, and leaves the state in two
    products at the end of the body:

        O   = P S₀ + R          (P = A_O: rows × dk,  R = B_O)
        S_L = M S₀ + N          (M = A_S: dk × dk,    N = B_S)

    (M, N) is the chunk's transfer operator. Everything before the last
    products is independent of S₀ and so of the other chunks: the
    token-parallel part of the algorithm. Transfer operators compose
    ((M₂, N₂)∘(M₁, N₁) = (M₂M₁, M₂N₁ + N₂)), which is what splitting a long
    sequence across blocks or devices builds on. A body that is not linear
    in S₀ is an error.
  }];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

def RecSplitScan : Pass<"rec-split-scan", "::mlir::ModuleOp"> {
  let summary = "Split a chunk body into its token-parallel and sequential parts";
  let description = [{
    Marks every op of a `rec.chunked` body with `rec.phase`:

    - `"prep"`: independent of the entering state, so every chunk of every
      sequence can run it at once (a token-parallel kernel);
    - `"scan"`: depends on the entering state, or is the output or the
      yield: the chunks of a sequence in order (the scan kernel);
    - `"both"`: a `rec.chunk.rows` that both read; the scan loads it again
      rather than keep it (without `keep-rows`; with it, such rows are prep
      values that cross like any other, and the scan loads no input);
    - `"out"` (with `out-phase`): a scan op that the yield does not need,
      the output and what only it reads, and a prep op that only out ops
      read: every chunk at once after the scan (a chunk-parallel kernel),
      from the chunk's entering state. What the out phase reads of the
      prep's it redoes where that is a row load, a cumulative sum or a
      negation of one (a copy before its first out reader), and so a
      short chain of scan ops (at most 4, no `rec.chunk.decay_state`)
      that reads only the entering state, row loads and prep values (a
      delta factor's U = W S + U0). A prep value an out op still reads is
      marked `rec.to_out` (for the example specs, only values the scan
      reads whole, which the out kernel reads from the scan's workspace),
      a scan value one reads `rec.scan_to_out`; `rec.chunked` gets
      `rec.out_phase`.

    A prep result that a scan op reads crosses through a per-chunk
    workspace and is marked `rec.to_scan`: `"all"`, or `"last_row"` when
    only `rec.chunk.decay_state` reads it (as its decay, G's last row). A
    state-free `rec.chunk.matmul` with a key x value result (the state's
    shape) that only the scan reads moves into the scan, so that no dk x dv
    tile is kept per chunk. The body is unchanged otherwise, and
    `rec.chunked` gets `rec.split_scan`.
  }];
  let options = [
    Option<"keepRows", "keep-rows", "bool", "false",
           "Rows the scan reads cross from the prep like other values "
           "(more workspace; the scan waits on no input loads)">,
    Option<"outPhase", "out-phase", "bool", "false",
           "Scan ops that the next chunk's state does not need (the output "
           "and what only it reads) run in a third phase, \"out\", every "
           "chunk at once after the scan, from each chunk's entering state">
  ];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

def RecSchedule : Pass<"rec-schedule", "::mlir::ModuleOp"> {
  let summary = "Map chunk-level and decode IR onto thread blocks and shared memory";
  let description = [{
    Fixes how the GPU runs a lowered recurrence and checks that it fits:

    - the sizes kernels are compiled for (`dk`, `dv`, both multiples of 32
      up to 256);
    - the work of one thread block: one (sequence, value head, value tile)
      with `value-tile` of the dv value columns (it must divide dv), the
      block's slice of the state (dk × value-tile, float32) kept in shared
      memory for the whole sequence, `threads` threads a block;
    - for `rec.chunked`, the shared-memory offset of every tile of the
      chunk body (`rec.smem_offset`, in floats, after the state slice),
      planned from the tiles' live ranges so that dead tiles are reused;
      the total (`shared_bytes`) must stay within `max-shared-bytes`
      (232448, sm_90's opt-in limit per block, by default);
    - after `--rec-split-scan`, the prep kernel's own plan
      (`rec.prep_smem_offset`, `prep_shared_bytes`), its ops reordered
      (they are pure) where that needs fewer floats: sunk to their first
      reader, gathered ahead of the scan ops, and depth first from what
      crosses to the scan or the value loop, the last taken only where it
      fits more prep blocks an SM. Where the scan cannot stage what
      crosses, it reads the prep values where their ops stand: the body
      then keeps the chunk algorithm's order and each prep op records its
      place in the prep kernel's (`rec.prep_order`);
    - with `rec-split-scan out-phase`, the out phase's plan
      (`rec.out_smem_offset` on its ops and on what it receives, each
      received value placed right before its first reader as the out
      kernel reads it, `outKernelOrder`; after the state slice;
      `out_shared_bytes`; with `out-value-loop`, `outKernelLoopOrder`:
      the key side once, then the value side for each value tile) and what crosses to it a chunk and value head
      (`rec.out_workspace_offset`, after the entering state's dk × dv
      floats; `out_workspace_floats`; none for a prep value the scan
      reads whole, which the out kernel reads from the scan's
      workspace).

    The result is a `rec.schedule` dictionary on `rec.chunked` and
    `rec.decode`; `rkc compile` prints CUDA from it.
  }];
  let options = [
    Option<"dk", "dk", "int64_t", "128", "Key dimension">,
    Option<"dv", "dv", "int64_t", "128", "Value dimension">,
    Option<"valueTile", "value-tile", "int64_t", "32",
           "Value columns a thread block owns">,
    Option<"threads", "threads", "int64_t", "256", "Threads a block">,
    Option<"prepValueTile", "prep-value-tile", "int64_t", "0",
           "Value columns the prep kernel's value-side ops take at a time "
           "(a multiple of value-tile dividing dv); 0: the widest whose plan "
           "needs no more shared memory than the value tile's">,
    Option<"prefetch", "prefetch", "int64_t", "0",
           "1: fetch input rows into L2 ahead of their loads (the next "
           "chunk's during a chunk, the prep kernel's own at its start)">,
    Option<"scanSegments", "scan-segments", "int64_t", "4",
           "Split kernels: where the scan's blocks leave half the "
           "multiprocessors free, the launcher runs each sequence's chunks "
           "in this many segments, the prep of one beside the scan of the "
           "one before (a second stream); 1: the prep, then the scan">,
    Option<"prepBlocks", "prep-blocks", "int64_t", "0",
           "Split kernels: the prep kernel's launch bound asks for as many "
           "blocks an SM as its shared memory allows, at most this many (1 "
           "to 4, and at least 64 registers a thread); 0: at most 4">,
    Option<"decodeBlocks", "decode-blocks", "int64_t", "-1",
           "Blocks an SM the decode kernel's registers leave room for: 0 "
           "lets ptxas choose, -1 as many as 48 registers a thread allow">,
    Option<"decodeQuads", "decode-quads", "int64_t", "-1",
           "Decode: 1 keeps a thread's rows of the state consecutive, so "
           "that the key-axis vectors applied to them load four rows at a "
           "time where a thread's rows come in whole fours (fewer shared "
           "loads, a few more registers); 0 strided rows; "
           "-1 (default): 1 where a token has two or more sub-steps">,
    Option<"decodeRawRows", "decode-raw-rows", "int64_t", "-1",
           "Decode: a row role that reads from two to this many input rows "
           "loads them all as stored before widening any (one round trip to "
           "memory, more registers); 0 none; -1 (default): where a token has "
           "one sub-step, the roles of two rows (every role if none reads "
           "more), else none">,
    Option<"pairGrams", "pair-grams", "int64_t", "-1",
           "Split kernels: 1 puts two independent Grams of the prep side by "
           "side (the second, and the prep ops it needs, moved up to the "
           "first), their tasks dealt to the warps at once with one barrier "
           "after both; 0 leaves the order as planned; -1 (default): 0">,
    Option<"elementwiseQuads", "elementwise-quads", "int64_t", "-1",
           "Elementwise prep ops four elements at a time where their tiles "
           "allow: 1 on, 0 off, -1 (default): on unless a sub-step with a "
           "per-channel gate reads the state before its decay">,
    Option<"padAddendRows", "pad-addend-rows", "int64_t", "1",
           "Split kernels: 1 gives a float32 scan tile of a product that only "
           "sums read (in the fused forms, as the addend a later product adds "
           "as it stores; a delta factor's Q S) rows 8 floats longer than "
           "dense (`rec.smem_stride`, the default), so that the fragment "
           "stores and the addend's pair loads meet no bank conflicts; 0: "
           "dense">,
    Option<"outValueLoop", "out-value-loop", "int64_t", "0",
           "With an out phase: 1 gives the out kernel one block a chunk and "
           "value head, which computes what no value tile changes once (the "
           "query side, the chunk's own attention) and then the value side "
           "for each value tile in turn; 0: a block a value tile, each "
           "computing the key side again">,
    Option<"products", "products", "std::string", "\"tf32\"",
           "The tensor-core products of the kernels for 16-bit outputs: "
           "tf32 (m16n8k8, float32 operands) or bf16 (m16n8k16, operands "
           "rounded to bf16, float32 sums)">,
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", "232448",
           "Shared memory a block may use">
  ];
  let dependentDialects = ["::rkc::rec::RecDialect"];
}

#endif // REC_PASSES_TD
