//===- RecTypes.td - Types of the rec dialect --------------*- tablegen -*-===//
//
// A value of a recurrence spec is a per-token quantity of one of three sides:
// key (a vector of dk), value (a vector of dv) or scalar. Its rate says how
// often it changes: once per head (a constant), once per token, or once per
// sub-step (inputs with several rows a token, such as DeltaProduct's k).
//
//===----------------------------------------------------------------------===//

#ifndef REC_TYPES_TD
#define REC_TYPES_TD

include "RecDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Rec_Rate : I32EnumAttr<"Rate", "how often a spec value changes", [
    I32EnumAttrCase<"head", 0>,
    I32EnumAttrCase<"token", 1>,
    I32EnumAttrCase<"substep", 2>
  ]> {
  let cppNamespace = "::rkc::rec";
  let genSpecializedAttr = 0;
  let description = [{
    Rates are ordered: `head` (constant over tokens, input layout [H] or
    [H, d]) < `token` (one row a token, [B, T, H] or [B, T, H, d]) <
    `substep` (n rows a token, [B, T*n, H(, d)], row t*n + j for sub-step j).
    An expression has the largest rate of its operands.
  }];
}

class Rec_Type<string name, string typeMnemonic, string side>
    : TypeDef<Rec_Dialect, name> {
  let mnemonic = typeMnemonic;
  let parameters = (ins DefaultValuedParameter<"::rkc::rec::Rate",
                        "::rkc::rec::Rate::token">:$rate);
  let assemblyFormat = "(`<` $rate^ `>`)?";
  let summary = side;
}

def Rec_KeyType : Rec_Type<"Key", "key", "key-side vector (dk)"> {
  let description = [{
    A vector with the state's key dimension dk: q, k, erase addresses,
    per-channel gates. Written `!rec.key`, `!rec.key<head>` (a per-head
    constant vector, layout [H, dk]) or `!rec.key<substep>`.
  }];
}

def Rec_ValueType : Rec_Type<"Value", "value", "value-side vector (dv)"> {
  let description = [{
    A vector with the state's value dimension dv: v, value-side write gates.
    Written `!rec.value`, `!rec.value<head>` or `!rec.value<substep>`.
  }];
}

def Rec_ScalarType : Rec_Type<"Scalar", "scalar", "scalar"> {
  let description = [{
    A scalar: beta, gamma, scalar gates, per-head constants such as QED's
    lambda (`!rec.scalar<head>`, layout [H]).
  }];
}

// Operand constraints. Wrapping each type in AnyTypeOf makes the assembly
// format print the full type (`!rec.key<substep>`) rather than its stripped
// parameters.
def Rec_Key : AnyTypeOf<[Rec_KeyType], "key-side vector (dk)">;
def Rec_Value : AnyTypeOf<[Rec_ValueType], "value-side vector (dv)">;
def Rec_Scalar : AnyTypeOf<[Rec_ScalarType], "scalar">;
def Rec_VectorType : AnyTypeOf<[Rec_KeyType, Rec_ValueType],
                               "key- or value-side vector">;
def Rec_AnyType : AnyTypeOf<[Rec_KeyType, Rec_ValueType, Rec_ScalarType],
                            "rec value">;
def Rec_GateType : AnyTypeOf<[Rec_ScalarType, Rec_KeyType],
                             "log-space gate (scalar or per key channel)">;

//===----------------------------------------------------------------------===//
// Structure tags of a generalized DPLR sub-step
//===----------------------------------------------------------------------===//

def Rec_DecayKind : I32EnumAttr<"DecayKind", "the decay of a sub-step", [
    I32EnumAttrCase<"none", 0, "no_decay">,
    I32EnumAttrCase<"scalar", 1, "scalar_decay">,
    I32EnumAttrCase<"channel", 2, "channel_decay">
  ]> {
  let cppNamespace = "::rkc::rec";
}

def Rec_Rank1Kind : I32EnumAttr<"Rank1Kind", "the rank-1 factor of a sub-step", [
    I32EnumAttrCase<"none", 0, "no_rank1">,
    I32EnumAttrCase<"symmetric", 1, "symmetric">,
    I32EnumAttrCase<"general", 2, "general">
  ]> {
  let cppNamespace = "::rkc::rec";
}

def Rec_WriteKind : I32EnumAttr<"WriteKind", "whether a sub-step writes k vᵀ", [
    I32EnumAttrCase<"none", 0, "no_write">,
    I32EnumAttrCase<"kv", 1, "writes">
  ]> {
  let cppNamespace = "::rkc::rec";
}

def Rec_ReadKind : I32EnumAttr<"ReadKind", "whether a sub-step is read", [
    I32EnumAttrCase<"none", 0, "no_read">,
    I32EnumAttrCase<"query", 1, "reads">
  ]> {
  let cppNamespace = "::rkc::rec";
}

def Rec_RowRole : I32EnumAttr<"RowRole", "a per-row vector of the sub-step table", [
    I32EnumAttrCase<"gate", 0>,
    I32EnumAttrCase<"erase_along", 1>,
    I32EnumAttrCase<"read", 2>,
    I32EnumAttrCase<"strength", 3>,
    I32EnumAttrCase<"key", 4>,
    I32EnumAttrCase<"value", 5>,
    I32EnumAttrCase<"write_strength", 6>,
    I32EnumAttrCase<"query", 7>,
    I32EnumAttrCase<"read_along", 8>
  ]> {
  let cppNamespace = "::rkc::rec";
}

def Rec_MaskKind : I32EnumAttr<"MaskKind", "which pairs of rows a Gram product keeps", [
    I32EnumAttrCase<"strict", 0>,
    I32EnumAttrCase<"lower", 1>
  ]> {
  let cppNamespace = "::rkc::rec";
}

//===----------------------------------------------------------------------===//
// Chunk-level tiles
//===----------------------------------------------------------------------===//

def Rec_Axis : I32EnumAttr<"Axis", "an axis of a chunk-level tile", [
    I32EnumAttrCase<"chunk", 0>,
    I32EnumAttrCase<"key", 1>,
    I32EnumAttrCase<"value", 2>,
    I32EnumAttrCase<"one", 3>
  ]> {
  let cppNamespace = "::rkc::rec";
  let genSpecializedAttr = 0;
}

def Rec_TileType : TypeDef<Rec_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "a float tile of one chunk: rows x cols over chunk, key, value or one";
  let description = [{
    A matrix the chunked algorithm computes per chunk. Each axis is `chunk`
    (the chunk's sub-step rows, L = C·m for C tokens of m sub-steps),
    `key` (dk), `value` (dv) or `one` (a column of per-row scalars).
    A chunk axis may keep only some sub-step slots: `chunk[1]` holds, for
    every token of the chunk, the row of sub-step 1 alone (C rows). This is
    how specialisation shows in types: EDA's value tile is
    `!rec.tile<chunk[1], value>`, since its erase sub-step (slot 0) writes
    nothing, and its output `!rec.tile<chunk[1], value>` has the read rows
    alone. The state is `!rec.tile<key, value>`.
  }];
  let parameters = (ins "::rkc::rec::Axis":$rows,
                        ArrayRefParameter<"int64_t">:$rowSlots,
                        "::rkc::rec::Axis":$cols,
                        ArrayRefParameter<"int64_t">:$colSlots);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    static TileType get(::mlir::MLIRContext *context, Axis rows, Axis cols) {
      return get(context, rows, {}, cols, {});
    }
  }];
}

#endif // REC_TYPES_TD
