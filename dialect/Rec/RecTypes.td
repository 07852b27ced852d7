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

#endif // REC_TYPES_TD
