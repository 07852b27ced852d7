//===- RecDialect.td - The rec dialect ---------------------*- tablegen -*-===//
//
// The rec dialect describes a linear-attention recurrence: a fixed-size state
// S (dk x dv per head) updated every token by an ordered product of
// structured factors, and read through o = S^T (scale * q).
//
//===----------------------------------------------------------------------===//

#ifndef REC_DIALECT_TD
#define REC_DIALECT_TD

include "mlir/IR/DialectBase.td"

def Rec_Dialect : Dialect {
  let name = "rec";
  let cppNamespace = "::rkc::rec";
  let summary = "Linear-attention recurrence specs and their lowerings";
  let description = [{
    A `rec.recurrence` names its per-token inputs (key-side vectors of size
    dk, value-side vectors of size dv, scalars, per-head constants, and inputs
    with several rows a token), computes per-token vector expressions from them
    (the prologue that kernels fuse: L2 normalisation, sigmoid, softplus,
    projections), and gives the state transition as a `rec.step`: the factors
    that act on the state in the order they act.

    Conventions (see MATH.md): every factor multiplies the state from the
    left; the read comes after the update; `scale` multiplies q in the read
    only; gates are in log space.
  }];
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

#endif // REC_DIALECT_TD
