// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-interleave | FileCheck %s --check-prefix=EDA
// RUN: rkc-opt %rkc_src/examples/specs/deltaproduct.mlir --rec-interleave=params=n=3 | FileCheck %s --check-prefix=DP3
// RUN: rkc-opt %rkc_src/examples/specs/deltaproduct.mlir --rec-interleave | FileCheck %s --check-prefix=DP2
// RUN: rkc-opt %rkc_src/examples/specs/qed.mlir --rec-interleave | FileCheck %s --check-prefix=QED
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-interleave | FileCheck %s --check-prefix=GDN
// RUN: rkc-opt %rkc_src/examples/specs/dplr.mlir --rec-interleave | FileCheck %s --check-prefix=DPLR
// RUN: rkc-opt %rkc_src/examples/specs/linear_attention.mlir --rec-interleave | FileCheck %s --check-prefix=LA
// RUN: rkc-opt %rkc_src/examples/specs/comba.mlir --rec-interleave | FileCheck %s --check-prefix=COMBA
// RUN: not rkc-opt %rkc_src/examples/specs/deltaproduct.mlir --rec-interleave=params=m=3 2>&1 | FileCheck %s --check-prefix=BADPARAM

// EDA becomes an erase sub-step (the decay, the erase at e, no write, not read) and a
// delta sub-step (no decay, the write, the read).
// EDA: rec.interleaved {
// EDA-NEXT: rec.substep<channel_decay, symmetric, no_write, no_read> decay(%g : !rec.key) rank1(%e, %e, %gamma : !rec.key, !rec.key, !rec.scalar){{$}}
// EDA-NEXT: rec.substep<no_decay, symmetric, writes, reads> rank1(%k, %k, %beta : {{.*}}) write(%k, %v, %beta : {{.*}}) read(%q : !rec.key){{$}}
// EDA-NEXT: }

// DeltaProduct, n = 3: three sub-steps, the decay on the first only, the read
// on the last; sub-step j reads row j of k, v, beta.
// DP3: params {n = 3 : i64}
// DP3: rec.interleaved {
// DP3-NEXT: rec.substep<scalar_decay, symmetric, writes, no_read> decay(%g : !rec.scalar) rank1(%k, %k, %beta {{.*}} write(%k, %v, %beta {{.*}}){{$}}
// DP3-NEXT: rec.substep<no_decay, symmetric, writes, no_read> rank1({{.*}}) write({{.*}}) {index = 1 : i64}
// DP3-NEXT: rec.substep<no_decay, symmetric, writes, reads> rank1({{.*}}) write({{.*}}) read(%q : !rec.key) {index = 2 : i64}
// DP3-NEXT: }

// DP2: params {n = 2 : i64}
// DP2: rec.interleaved {
// DP2-NEXT: rec.substep<scalar_decay
// DP2-NEXT: rec.substep<no_decay, symmetric, writes, reads> {{.*}} {index = 1 : i64}
// DP2-NEXT: }

// QED becomes one general sub-step (reads at a, writes along k) whose vectors come
// from the prologue.
// QED: %[[A:.*]] = rec.add
// QED: %[[WV:.*]] = rec.mul %w, %v
// QED: %[[ONE:.*]] = rec.constant 1.0
// QED: rec.interleaved {
// QED-NEXT: rec.substep<channel_decay, general, writes, reads> decay(%g : !rec.key) rank1(%k, %[[A]], %[[ONE]] : {{.*}}) write(%k, %[[WV]], %[[ONE]] : {{.*}}) read(%q : !rec.key)
// QED-NEXT: }

// GDN's scalar decay joins the delta sub-step.
// GDN: rec.substep<scalar_decay, symmetric, writes, reads> decay(%g : !rec.scalar) rank1(%k, %k, %beta

// In DPLR the rank-1 term reads the state before the decay; its strength is -1
// (a = -(-1)·a).
// DPLR: %[[MINUS:.*]] = rec.constant -1.0
// DPLR: rec.substep<channel_decay, general, writes, reads> undecayed_read decay(%g : !rec.key) rank1(%a, %b, %[[MINUS]]

// LA: rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, {{.*}}) read(%q : !rec.key)

// Comba: reads at p, writes along k; the write joins the rank-1 sub-step.
// COMBA: rec.interleaved {
// COMBA-NEXT: rec.substep<scalar_decay, general, writes, reads> decay(%g : !rec.scalar) rank1(%k, %p, %beta {{.*}}) write(%k, %v, %beta
// COMBA-NEXT: }

// BADPARAM: error: rec-interleave: @deltaproduct has no parameter 'm'
