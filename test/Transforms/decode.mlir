// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-interleave --rec-decode | FileCheck %s
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-decode | FileCheck %s --check-prefix=KDA

// The decode form keeps the sub-step table: per new token, the erase
// sub-step then the delta sub-step, each applied to the state in place.
// CHECK: rec.decode tokens(1) {
// CHECK-NEXT: rec.substep<channel_decay, symmetric, no_write, no_read> decay(%g
// CHECK-NEXT: rec.substep<no_decay, symmetric, writes, reads>
// CHECK-NEXT: }

// KDA: rec.decode tokens(1) {
// KDA-NEXT: rec.substep<channel_decay, symmetric, writes, reads> decay(%g : !rec.key) rank1(%k, %k, %beta
