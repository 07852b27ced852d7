//===- RecOps.td - Operations of the rec dialect -----------*- tablegen -*-===//
//
// Spec-level operations: the recurrence, its inputs, per-token prologue
// expressions, and the state factors of one step in the order they act.
//
//===----------------------------------------------------------------------===//

#ifndef REC_OPS_TD
#define REC_OPS_TD

include "RecTypes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Rec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Rec_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Structure: recurrence, inputs, step, repeat
//===----------------------------------------------------------------------===//

def Rec_RecurrenceOp : Rec_Op<"recurrence", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "a linear-attention recurrence spec";
  let description = [{
    Per (sequence, value head) the recurrence keeps a state S of dk x dv,
    starting from `initial_state` (zeros by default), and for every token t

        S_t = F_m ... F_2 F_1 S_{t-1} (+ writes),    o_t = S_t^T (scale * q_t)

    where F_1 ... F_m are the factors of the body's `rec.step`, listed in the
    order they act (F_1 first). The body declares the inputs
    (`rec.input`), computes prologue expressions from them, and ends with the
    step.

    `scale` defaults to dk^-0.5 and multiplies q in the read only.
    `params` holds the integer parameters a spec can be compiled or run with
    (DeltaProduct's sub-step count `n`); each must be a positive integer.

    ```mlir
    rec.recurrence @kda {
      %q = rec.input "q" : !rec.key
      ...
      rec.step {
        rec.decay %g : !rec.key
        rec.delta %k, %v scale %beta : !rec.key, !rec.value, !rec.scalar
        rec.read %q : !rec.key
      }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<DictionaryAttr>:$params);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name (`scale` $scale^)? (`params` $params^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The step of this recurrence, null once a pass has lowered it.
    StepOp getStep();
    /// The state transition: the step or its lowered form (the last op).
    ::mlir::Operation *getTransition();
    /// The inputs in declaration order.
    llvm::SmallVector<InputOp> getInputs();
    /// The value of integer parameter `name`, or std::nullopt.
    std::optional<int64_t> getParam(llvm::StringRef name);
  }];
}

def Rec_InputOp : Rec_Op<"input", [
    HasParent<"RecurrenceOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a named input tensor of the recurrence";
  let description = [{
    Declares an input the caller passes by `name`. Its type gives its side and
    rate, hence its layout (MATH.md): `!rec.key` is [B, T, H, dk],
    `!rec.value` [B, T, HV, dv], `!rec.scalar` [B, T, H], `<head>` drops
    [B, T] ([H], [H, dk]), `<substep>` has n rows a token ([B, T*n, H, dk]).
    Under GVA each input has either the key-head count H or the value-head
    count HV (a multiple of H). The names `o`, `final_state`,
    `initial_state` and `cu_seqlens` are reserved.

    ```mlir
    %beta = rec.input "beta" : !rec.scalar
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Rec_AnyType:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Rec_StepOp : Rec_Op<"step", [
    HasParent<"RecurrenceOp">, SingleBlock, NoTerminator]> {
  let summary = "the state transition of one token, factors in acting order";
  let description = [{
    Holds the factors applied to the state for one token, first-acting first,
    then exactly one `rec.read` as its last operation (the read comes after
    the update). A `rec.repeat` inside repeats its factors once per sub-step.
    The listing `decay g; erase e scale γ; delta k, v scale β; read q` means

        S_t = (I - β k kᵀ)(I - γ e eᵀ) Diag(exp g) S_{t-1} + β k vᵀ,
        o_t = S_tᵀ (scale · q).
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Rec_RepeatOp : Rec_Op<"repeat", [
    HasParent<"StepOp">, SingleBlock, NoTerminator]> {
  let summary = "factors repeated once per sub-step";
  let description = [{
    Applies its factors `count` times a token, where `count` names an integer
    parameter of the recurrence. In iteration j, a `<substep>` value reads row
    t*n + j of its input. DeltaProduct:

    ```mlir
    rec.repeat "n" {
      rec.delta %k, %v scale %beta : !rec.key<substep>, !rec.value<substep>, !rec.scalar<substep>
    }
    ```
    means S ← Π_{j=n-1..0} [(I - β_j k_j k_jᵀ) S + β_j k_j v_jᵀ].
  }];
  let arguments = (ins StrAttr:$count);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$count attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Prologue expressions (per token, fused into kernels)
//===----------------------------------------------------------------------===//

class Rec_ExprOp<string mnemonic, list<Trait> traits = []>
    : Rec_Op<mnemonic, !listconcat([Pure, HasParent<"RecurrenceOp">], traits)>;

class Rec_BinaryOp<string mnemonic, string math>
    : Rec_ExprOp<mnemonic, [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise " # math;
  let description = [{
    Elementwise }] # math # [{ of two values of the same side; a scalar
    broadcasts over a vector. Combining a key-side (dk) with a value-side
    (dv) vector is an error. The result has the larger rate of the two.
  }];
  let arguments = (ins Rec_AnyType:$lhs, Rec_AnyType:$rhs);
  let results = (outs Rec_AnyType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Rec_AddOp : Rec_BinaryOp<"add", "sum x + y">;
def Rec_SubOp : Rec_BinaryOp<"sub", "difference x - y">;
def Rec_MulOp : Rec_BinaryOp<"mul", "product x ⊙ y">;

class Rec_UnaryOp<string mnemonic, string math>
    : Rec_ExprOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "elementwise " # math;
  let description = "Elementwise " # math # ", same side and rate as x.";
  let arguments = (ins Rec_AnyType:$x);
  let results = (outs Rec_AnyType:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Rec_NegOp : Rec_UnaryOp<"neg", "negation -x">;
def Rec_ExpOp : Rec_UnaryOp<"exp", "exponential exp(x)">;
def Rec_SigmoidOp : Rec_UnaryOp<"sigmoid", "logistic 1 / (1 + exp(-x))">;
def Rec_SoftplusOp : Rec_UnaryOp<"softplus", "softplus log(1 + exp(x))">;
def Rec_LogSigmoidOp : Rec_UnaryOp<"logsigmoid",
                                   "log-sigmoid -log(1 + exp(-x))">;

def Rec_L2NormOp : Rec_ExprOp<"l2norm", [SameOperandsAndResultType]> {
  let summary = "L2 normalisation x / sqrt(xᵀx + eps)";
  let description = [{
    `x / sqrt(Σ_d x_d² + eps)` with `eps` = 1e-6 by default, as
    flash-linear-attention's in-kernel normalisation of q and k.
  }];
  let arguments = (ins Rec_VectorType:$x,
                       DefaultValuedAttr<F64Attr, "1e-6">:$eps);
  let results = (outs Rec_VectorType:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
}

def Rec_DotOp : Rec_ExprOp<"dot", [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "inner product xᵀy of two vectors of one side";
  let description = [{
    `Σ_d x_d y_d`, a scalar with the larger rate of the two operands.
  }];
  let arguments = (ins Rec_VectorType:$lhs, Rec_VectorType:$rhs);
  let results = (outs Rec_Scalar:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Rec_ProjectOutOp : Rec_ExprOp<"project_out",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the projector P⊥_k(x) = x - k (kᵀx)";
  let description = [{
    Removes from x its component along `along` (a unit vector in the specs
    that use it): `x - k (kᵀ x)`. QED builds its erase direction with it.
  }];
  let arguments = (ins Rec_VectorType:$x, Rec_VectorType:$along);
  let results = (outs Rec_VectorType:$result);
  let assemblyFormat = [{
    $x `along` $along attr-dict `:` type($x) `,` type($along)
  }];
}

def Rec_ConstantOp : Rec_ExprOp<"constant",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a scalar constant, the same for every head and token";
  let description = [{
    ```mlir
    %half = rec.constant 0.5
    ```
    The result is a `!rec.scalar<head>`.
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Rec_Scalar:$result);
  let assemblyFormat = "$value attr-dict";
  let builders = [OpBuilder<(ins "double":$value)>];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// State factors (inside rec.step or rec.repeat, in acting order)
//===----------------------------------------------------------------------===//

class Rec_FactorOp<string mnemonic, list<Trait> traits = []>
    : Rec_Op<mnemonic, !listconcat([ParentOneOf<["StepOp", "RepeatOp"]>],
                                   traits)>;

def Rec_DecayOp : Rec_FactorOp<"decay"> {
  let summary = "S ← Diag(exp g) S, a log-space gate";
  let description = [{
    Decays the state by `exp(g)`: per key channel when g is a key-side vector
    (KDA), uniformly when g is a scalar (GDN). Gates are in log space, g ≤ 0.
  }];
  let arguments = (ins Rec_GateType:$gate);
  let assemblyFormat = "$gate attr-dict `:` type($gate)";
}

def Rec_EraseOp : Rec_FactorOp<"erase"> {
  let summary = "S ← (I - γ e eᵀ) S, a symmetric rank-1 erase";
  let description = [{
    Erases the state along the address e with strength γ (1 when `scale` is
    absent); writes nothing. EDA erases at a learned address before its delta
    write.
  }];
  let arguments = (ins Rec_Key:$address, Optional<Rec_Scalar>:$scale);
  let assemblyFormat = [{
    $address (`scale` $scale^)? attr-dict `:` type($address) (`,` type($scale)^)?
  }];
}

def Rec_DeltaOp : Rec_FactorOp<"delta"> {
  let summary = "S ← (I - β k kᵀ) S + β k vᵀ, the delta rule";
  let description = [{
    Replaces the value stored at k by v with strength β (1 when `scale` is
    absent): the symmetric rank-1 factor followed by the write β k vᵀ.
  }];
  let arguments = (ins Rec_Key:$key, Rec_Value:$value,
                       Optional<Rec_Scalar>:$scale);
  let assemblyFormat = [{
    $key `,` $value (`scale` $scale^)? attr-dict `:` type($key) `,` type($value)
    (`,` type($scale)^)?
  }];
}

def Rec_Rank1Op : Rec_FactorOp<"rank1"> {
  let summary = "S ← (I - s x yᵀ) S, a general rank-1 factor";
  let description = [{
    Reads the state at y (`yᵀ S`) and writes the result back along x, with
    strength s (1 when `scale` is absent). GDN-2's factor `(I - k aᵀ)` is
    `rec.rank1 %k, %a`: it reads at a and writes at k. Comba's
    `(I - β k pᵀ)` is `rec.rank1 %k, %p scale %beta`.
  }];
  let arguments = (ins Rec_Key:$write_along, Rec_Key:$read_along,
                       Optional<Rec_Scalar>:$scale);
  let assemblyFormat = [{
    $write_along `,` $read_along (`scale` $scale^)? attr-dict `:`
    type($write_along) `,` type($read_along) (`,` type($scale)^)?
  }];
}

def Rec_DPLROp : Rec_FactorOp<"dplr"> {
  let summary = "S ← (Diag(exp g) + a bᵀ) S, diagonal plus low rank";
  let description = [{
    The RWKV-7 family transition: the decay and the rank-1 term both act on
    the state as it was before this factor (bᵀ reads the undecayed state,
    the result is written back along a).
  }];
  let arguments = (ins Rec_Key:$gate, Rec_Key:$write_along,
                       Rec_Key:$read_along);
  let assemblyFormat = [{
    $gate `,` $write_along `,` $read_along attr-dict `:` type($gate) `,`
    type($write_along) `,` type($read_along)
  }];
}

def Rec_WriteOp : Rec_FactorOp<"write"> {
  let summary = "S ← S + s k vᵀ, an outer-product write";
  let description = [{
    Adds the outer product of a key-side and a value-side vector, scaled by s
    (1 when `scale` is absent).
  }];
  let arguments = (ins Rec_Key:$key, Rec_Value:$value,
                       Optional<Rec_Scalar>:$scale);
  let assemblyFormat = [{
    $key `,` $value (`scale` $scale^)? attr-dict `:` type($key) `,` type($value)
    (`,` type($scale)^)?
  }];
}

def Rec_ReadOp : Rec_Op<"read", [HasParent<"StepOp">]> {
  let summary = "o = Sᵀ (scale · q), the read after the update";
  let description = [{
    The token's output: the updated state read at q, scaled by the
    recurrence's `scale` (dk^-0.5 by default). The last operation of a step.
  }];
  let arguments = (ins Rec_Key:$query);
  let assemblyFormat = "$query attr-dict `:` type($query)";
}

//===----------------------------------------------------------------------===//
// Interleaved form: generalized DPLR sub-steps
//===----------------------------------------------------------------------===//

def Rec_InterleavedOp : Rec_Op<"interleaved", [
    HasParent<"RecurrenceOp">, SingleBlock, NoTerminator]> {
  let summary = "one token as a sequence of generalized DPLR sub-steps";
  let description = [{
    What `--rec-interleave` makes of a `rec.step`: the token's factors as m
    consecutive `rec.substep`s, each of the one form

        S ← (Diag(exp g) + a bᵀ) S + k vᵀ

    The last sub-step reads. Every later stage (chunking, decoding) works on
    this table.
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Rec_SubstepOp : Rec_Op<"substep", [
    ParentOneOf<["InterleavedOp", "DecodeOp", "ChunkedOp"]>,
    AttrSizedOperandSegments]> {
  let summary = "a generalized DPLR sub-step S ← (Diag(exp g) + a bᵀ) S + k vᵀ";
  let description = [{
    One row of the sub-step table, in factored form:

        a = -α x,    b = exp(g) ⊙ y   (b = y with `undecayed_read`),
        S ← (Diag(exp g) + a bᵀ) S + κ k vᵀ,    o = Sᵀ (scale · q) if read.

    `decay(g)` is absent for the identity; `rank1(x, y, α)` is absent when
    the sub-step has no rank-1 factor; `write(k, v, κ)` when it writes
    nothing; `read(q)` when it is not read. A rank-1 factor that acts after
    the decay, `(I - α x yᵀ) Diag(exp g) = Diag(exp g) - α x (exp(g) ⊙ y)ᵀ`,
    reads at the decayed vector: the read vector carries the sub-step's
    decay. DPLR's `(Diag(exp g) + a bᵀ)` reads the state before the decay
    (`undecayed_read`).

    The tags in `<...>` state the structure that later passes specialise on:
    decay (`no_decay`, `scalar_decay`, `channel_decay`), rank-1
    (`no_rank1`, `symmetric` when x and y are the same vector, `general`),
    write (`no_write`, `writes`) and read (`no_read`, `reads`). `index` is
    the row j of `<substep>` inputs this sub-step reads (DeltaProduct).

    ```mlir
    // EDA's erase: decay, erase at e with strength γ; no write, not read.
    rec.substep <channel_decay, symmetric, no_write, no_read>
        decay(%g : !rec.key) rank1(%e, %e, %gamma : !rec.key, !rec.key, !rec.scalar)
    ```
  }];
  let arguments = (ins Rec_DecayKind:$decay, Rec_Rank1Kind:$rank1,
                       Rec_WriteKind:$write, Rec_ReadKind:$read,
                       UnitAttr:$undecayed_read,
                       DefaultValuedAttr<I64Attr, "0">:$index,
                       Optional<Rec_GateType>:$gate,
                       Optional<Rec_Key>:$erase_along,
                       Optional<Rec_Key>:$read_along,
                       Optional<Rec_Scalar>:$strength,
                       Optional<Rec_Key>:$key,
                       Optional<Rec_Value>:$value,
                       Optional<Rec_Scalar>:$write_strength,
                       Optional<Rec_Key>:$query);
  let assemblyFormat = [{
    `<` $decay `,` $rank1 `,` $write `,` $read `>`
    (`undecayed_read` $undecayed_read^)?
    (`decay` `(` $gate^ `:` type($gate) `)`)?
    (`rank1` `(` $erase_along^ `,` $read_along `,` $strength `:`
      type($erase_along) `,` type($read_along) `,` type($strength) `)`)?
    (`write` `(` $key^ `,` $value `,` $write_strength `:`
      type($key) `,` type($value) `,` type($write_strength) `)`)?
    (`read` `(` $query^ `:` type($query) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def Rec_DecodeOp : Rec_Op<"decode", [
    HasParent<"RecurrenceOp">, SingleBlock, NoTerminator]> {
  let summary = "the sub-steps as a state update for one new token";
  let description = [{
    What `--rec-decode` makes of the interleaved form: the decoding kernel's
    work for each new token from a given state, applied in place. Per
    sub-step, in order:

        u = Sᵀ b          (the rank-1 read; dv values)
        S ← Diag(exp g) S + a uᵀ + k vᵀ
    and o = Sᵀ (scale · q) at the reading sub-step. The state is read and
    written once per token; `tokens` new tokens are taken in sequence.
  }];
  let arguments = (ins DefaultValuedAttr<I64Attr, "1">:$tokens);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`tokens` `(` $tokens `)` attr-dict-with-keyword $body";
}

include "RecChunkOps.td"

#endif // REC_OPS_TD
