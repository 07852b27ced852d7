// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked="chunk-size=16 state-transfer=true" | FileCheck %s
// RUN: not rkc-opt %s --rec-state-transfer --split-input-file 2>&1 | FileCheck %s --check-prefix=ERRORS

// EDA as an affine map of the entering state: everything before the last
// two products is independent of S₀ (the token-parallel part), which then
// appears only in O = P S₀ + R (read rows) and S_L = M S₀ + N (M: dk x dk,
// the chunk's transfer operator).
// CHECK: ^bb0(%[[S0:.*]]: !rec.tile<key, value>):
// CHECK-NEXT: rec.chunk.identity : !rec.tile<key, key>
// CHECK-NOT: %[[S0]]
// CHECK: %[[PS:.*]] = rec.chunk.matmul %{{.*}}, %[[S0]] : (!rec.tile<chunk[1], key>, !rec.tile<key, value>) -> !rec.tile<chunk[1], value>
// CHECK-NEXT: %[[O:.*]] = rec.chunk.add %[[PS]], %{{.*}} : (!rec.tile<chunk[1], value>, !rec.tile<chunk[1], value>)
// CHECK-NEXT: %[[MS:.*]] = rec.chunk.matmul %{{.*}}, %[[S0]] : (!rec.tile<key, key>, !rec.tile<key, value>) -> !rec.tile<key, value>
// CHECK-NEXT: %[[SL:.*]] = rec.chunk.add %[[MS]], %{{.*}} : (!rec.tile<key, value>, !rec.tile<key, value>)
// CHECK-NEXT: rec.chunk.output %[[O]]
// CHECK-NEXT: rec.chunk.yield %[[SL]]

rec.recurrence @quadratic {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  rec.chunked chunk_size(4) substeps_per_token(1) table {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  } body {
  ^bb0(%s: !rec.tile<key, value>):
    // ERRORS: error: rec-state-transfer: the chunk is not linear in the entering state here
    %x = rec.chunk.matmul %s, %s {transpose_lhs} : (!rec.tile<key, value>, !rec.tile<key, value>) -> !rec.tile<value, value>
    rec.chunk.yield %s : !rec.tile<key, value>
  }
}

// -----

rec.recurrence @negated {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  rec.chunked chunk_size(4) substeps_per_token(1) table {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  } body {
  ^bb0(%s: !rec.tile<key, value>):
    // ERRORS: error: rec-state-transfer: cannot write 'rec.chunk.neg' as an affine map of the entering state
    %x = rec.chunk.neg %s : (!rec.tile<key, value>) -> !rec.tile<key, value>
    rec.chunk.yield %x : !rec.tile<key, value>
  }
}
