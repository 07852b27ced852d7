// The named pipeline shows every stage with --mlir-print-ir-after-all.
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked="chunk-size=16" --mlir-print-ir-after-all 2>&1 | FileCheck %s
// RUN: rkc-opt %rkc_src/examples/specs/deltaproduct.mlir --rec-lower-chunked="chunk-size=8 params=n=4" | FileCheck %s --check-prefix=PARAMS
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-chunk=chunk-size=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-chunk 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-decode 2>&1 | FileCheck %s --check-prefix=DECODEORDER
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-decode=tokens=0 2>&1 | FileCheck %s --check-prefix=TOKENS

// CHECK: IR Dump After RecNormalize (rec-normalize)
// CHECK: rec.step {
// CHECK: IR Dump After RecInterleave (rec-interleave)
// CHECK: rec.interleaved {
// CHECK: IR Dump After RecChunk (rec-chunk)
// CHECK: rec.chunked chunk_size(16) substeps_per_token(2)

// PARAMS: params {n = 4 : i64}
// PARAMS: rec.chunked chunk_size(8) substeps_per_token(4)

// ZERO: error: rec-chunk: chunk-size must be a positive number of tokens, got 0
// ORDER: error: rec-chunk needs sub-steps: run --rec-interleave first
// DECODEORDER: error: rec-decode needs sub-steps: run --rec-interleave first
// TOKENS: error: rec-decode: tokens must be a positive integer, got 0
