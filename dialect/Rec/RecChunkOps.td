//===- RecChunkOps.td - The chunked (WY/UT) algorithm ------*- tablegen -*-===//
//
// Chunk-level operations: the WY/UT algorithm of MATH.md on tiles of one
// chunk. `rec.chunked` holds the sub-step table and the per-chunk body; the
// body's block argument is the state entering the chunk and `rec.chunk.yield`
// gives the state leaving it, so running the body chunk after chunk is the
// inter-chunk state scan. Ops that do not depend on the entering state are
// the token-parallel part of the algorithm.
//
//===----------------------------------------------------------------------===//

#ifndef REC_CHUNK_OPS_TD
#define REC_CHUNK_OPS_TD

def Rec_Tile : AnyTypeOf<[Rec_TileType], "chunk tile">;

def Rec_ChunkedOp : Rec_Op<"chunked", [
    HasParent<"RecurrenceOp">, SingleBlock, NoTerminator]> {
  let summary = "the recurrence as a chunked WY/UT algorithm";
  let description = [{
    Runs the sub-step table (`substeps` region, as `rec.interleaved` had it)
    in chunks of `chunk_size` tokens, i.e. L = chunk_size · m sub-step rows
    for m sub-steps a token (chunks are token-aligned). For one chunk from
    state S₀, with `G` the inclusive cumulative log-decay:

        A_ba[t,s] = Σ_d b_t[d] a_s[d] exp(G_{t-1}[d] - G_s[d])   s < t
        A_bk[t,s] = Σ_d b_t[d] k_s[d] exp(G_{t-1}[d] - G_s[d])   s < t
        U = (I - A_ba)⁻¹ ((B ⊙ e^{G_{t-1}}) S₀ + A_bk V)
        O = (Q ⊙ e^{G_t}) S₀ + A_qa U + A_qk V                    s ≤ t
        S_L = e^{G_L} S₀ + (A ⊙ e^{G_L - G})ᵀ U + (K ⊙ e^{G_L - G})ᵀ V

    The body spells this out in `rec.chunk.*` ops; which of them exist, and
    on which rows, follows from the sub-steps' structure tags. The last chunk
    of a sequence is padded with neutral rows (g = 0, all vectors 0).
  }];
  let arguments = (ins I64Attr:$chunk_size, I64Attr:$substeps_per_token);
  let regions = (region SizedRegion<1>:$substeps, SizedRegion<1>:$body);
  let assemblyFormat = [{
    `chunk_size` `(` $chunk_size `)` `substeps_per_token` `(`
    $substeps_per_token `)` attr-dict-with-keyword `table` $substeps
    `body` $body
  }];
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "int64_t":$chunkSize, "int64_t":$substepsPerToken)>];
}

def Rec_ChunkYieldOp : Rec_Op<"chunk.yield", [
    Terminator, HasParent<"ChunkedOp">, Pure]> {
  let summary = "the state leaving the chunk";
  let description = "Ends a chunk body: S_L, the state handed to the next chunk.";
  let arguments = (ins Variadic<Rec_Tile>:$state);
  let assemblyFormat = "($state^ `:` type($state))? attr-dict";
}

class Rec_ChunkOp<string mnemonic, list<Trait> traits = []>
    : Rec_Op<"chunk." # mnemonic,
             !listconcat([Pure, HasParent<"ChunkedOp">], traits)> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Rec_ChunkRowsOp : Rec_ChunkOp<"rows"> {
  let summary = "gathers one vector of every sub-step row of the chunk";
  let description = [{
    The tile of the role's vector over the chunk's rows (or the slots its
    type keeps), from the sub-step table: `gate` g, `erase_along` x,
    `read` b (= exp(g) ⊙ y, or y with `undecayed_read`), `read_along` y
    as it is, `strength` α, `key` k, `value` v, `write_strength` κ, `query`
    scale · q. A sub-step without the role contributes zeros, and so do
    padding rows.
  }];
  let arguments = (ins Rec_RowRole:$role);
  let results = (outs Rec_Tile:$result);
  let assemblyFormat = "$role attr-dict `:` type($result)";
}

def Rec_ChunkCumsumOp : Rec_ChunkOp<"cumsum"> {
  let summary = "cumulative log-decay over the chunk's rows";
  let description = [{
    `G_t = g_1 + … + g_t` over all L rows (inclusive), or `G_{t-1}` with
    `exclusive`. A gate tile that keeps some slots is zero on the others.
  }];
  let arguments = (ins Rec_Tile:$gate, UnitAttr:$exclusive);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkGramOp : Rec_ChunkOp<"gram", [AttrSizedOperandSegments]> {
  let summary = "a masked, decay-weighted Gram product of two row tiles";
  let description = [{
    `M[t,s] = Σ_d lhs[t,d] rhs[s,d] exp(Gl[t,d] - Gr[s,d])` for the pairs the
    mask keeps (`strict`: s < t, `lower`: s ≤ t, in sub-step order), zero
    elsewhere; the mask applies before the exponential. Without decay
    operands there is no exponential at all; with `!rec.tile<chunk, one>`
    decay operands the weight is one scalar per pair.
  }];
  let arguments = (ins Rec_Tile:$lhs, Rec_Tile:$rhs,
                       Optional<Rec_Tile>:$lhs_decay,
                       Optional<Rec_Tile>:$rhs_decay, Rec_MaskKind:$mask);
  let results = (outs Rec_Tile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`decay` `(` $lhs_decay^ `,` $rhs_decay `)`)? `mask` `(` $mask `)`
    attr-dict `:` functional-type(operands, results)
  }];
}

def Rec_ChunkScaleColsOp : Rec_ChunkOp<"scale_cols"> {
  let summary = "M[t,s] · c[s], keeping the columns of c's slots";
  let description = [{
    Scales each column s by the per-row scalar c[s]. When c keeps fewer
    slots than M's columns, the other columns are dropped: this is how one
    Gram product serves both the erase (A_ba = M · diag(-α)) and the write
    (A_bk = M · diag(κ), on the writing rows only) of symmetric factors.
  }];
  let arguments = (ins Rec_Tile:$matrix, Rec_Tile:$scale);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkScaleRowsOp : Rec_ChunkOp<"scale_rows"> {
  let summary = "X[t,:] · c[t]";
  let description = "Scales each row t by the per-row scalar c[t].";
  let arguments = (ins Rec_Tile:$matrix, Rec_Tile:$scale);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkNegOp : Rec_ChunkOp<"neg"> {
  let summary = "-X";
  let description = "Elementwise negation.";
  let arguments = (ins Rec_Tile:$x);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkAddOp : Rec_ChunkOp<"add"> {
  let summary = "X + Y";
  let description = "Elementwise sum of two tiles of one type.";
  let arguments = (ins Rec_Tile:$lhs, Rec_Tile:$rhs);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkUTInverseOp : Rec_ChunkOp<"ut_inverse"> {
  let summary = "the UT transform (I - A)⁻¹ of a strictly lower A";
  let description = [{
    The unit lower-triangular inverse by forward substitution; A is the
    strictly lower A_ba of the chunk.
  }];
  let arguments = (ins Rec_Tile:$matrix);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkDecayRowsOp : Rec_ChunkOp<"decay_rows"> {
  let summary = "X[t,d] · exp(G[t,d])";
  let description = [{
    Decays each row by its cumulative gate: `Q ⊙ e^{G_t}` for the output,
    `B ⊙ e^{G_{t-1}}` for the WY vectors.
  }];
  let arguments = (ins Rec_Tile:$x, Rec_Tile:$decay);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkDecayToEndOp : Rec_ChunkOp<"decay_to_end"> {
  let summary = "X[t,d] · exp(G_L[d] - G[t,d])";
  let description = [{
    Carries each row to the end of the chunk: the decay a row's write
    undergoes until the chunk's last sub-step (G_L, the last row of G).
  }];
  let arguments = (ins Rec_Tile:$x, Rec_Tile:$decay);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkDecayStateOp : Rec_ChunkOp<"decay_state"> {
  let summary = "Diag(exp G_L) S";
  let description = "Decays the entering state by the whole chunk's gate.";
  let arguments = (ins Rec_Tile:$state, Rec_Tile:$decay);
  let results = (outs Rec_Tile:$result);
}

def Rec_ChunkMatmulOp : Rec_ChunkOp<"matmul"> {
  let summary = "X · Y, or Xᵀ · Y with transpose_lhs";
  let description = [{
    A tile product. The contracted axes must match (a chunk axis with the
    same slots). Xᵀ Y over chunk rows gives the state update.
  }];
  let arguments = (ins Rec_Tile:$lhs, Rec_Tile:$rhs, UnitAttr:$transpose_lhs);
  let results = (outs Rec_Tile:$result);
  let hasVerifier = 1;
}

def Rec_ChunkIdentityOp : Rec_ChunkOp<"identity"> {
  let summary = "the identity on the key axis, I (dk x dk)";
  let description = [{
    The coefficient of the entering state in itself: --rec-state-transfer
    starts from S₀ = I·S₀ + 0 when it writes the chunk as an affine map of
    S₀.
  }];
  let results = (outs Rec_Tile:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Rec_ChunkOutputOp : Rec_Op<"chunk.output", [HasParent<"ChunkedOp">]> {
  let summary = "writes the chunk's outputs";
  let description = [{
    Stores O (the reading rows, `!rec.tile<chunk[r], value>`) into `o` at the
    chunk's tokens.
  }];
  let arguments = (ins Rec_Tile:$output);
  let assemblyFormat = "$output attr-dict `:` type($output)";
}

#endif // REC_CHUNK_OPS_TD
