// Every example spec parses, verifies and prints back what MATH.md says.
// RUN: rkc-opt %rkc_src/examples/specs/linear_attention.mlir | FileCheck %s --check-prefix=LA
// RUN: rkc-opt %rkc_src/examples/specs/deltanet.mlir | FileCheck %s --check-prefix=DELTANET
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir | FileCheck %s --check-prefix=GDN
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir | FileCheck %s --check-prefix=KDA
// RUN: rkc-opt %rkc_src/examples/specs/gdn2.mlir | FileCheck %s --check-prefix=GDN2
// RUN: rkc-opt %rkc_src/examples/specs/qed.mlir | FileCheck %s --check-prefix=QED
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir | FileCheck %s --check-prefix=EDA
// RUN: rkc-opt %rkc_src/examples/specs/deltaproduct.mlir | FileCheck %s --check-prefix=DP
// RUN: rkc-opt %rkc_src/examples/specs/comba.mlir | FileCheck %s --check-prefix=COMBA
// RUN: rkc-opt %rkc_src/examples/specs/dplr.mlir | FileCheck %s --check-prefix=DPLR
// RUN: rkc-opt %rkc_src/examples/specs/kda_prologue.mlir | FileCheck %s --check-prefix=KDAP

// LA-LABEL: rec.recurrence @linear_attention {
// LA: rec.step {
// LA-NEXT: rec.write %k, %v : !rec.key, !rec.value
// LA-NEXT: rec.read %q : !rec.key

// DELTANET-LABEL: rec.recurrence @deltanet {
// DELTANET: %beta = rec.input "beta" : !rec.scalar
// DELTANET: rec.step {
// DELTANET-NEXT: rec.delta %k, %v scale %beta
// DELTANET-NEXT: rec.read %q

// GDN-LABEL: rec.recurrence @gdn {
// GDN: %g = rec.input "g" : !rec.scalar
// GDN: rec.step {
// GDN-NEXT: rec.decay %g : !rec.scalar
// GDN-NEXT: rec.delta %k, %v scale %beta
// GDN-NEXT: rec.read %q

// KDA-LABEL: rec.recurrence @kda {
// KDA: %g = rec.input "g" : !rec.key
// KDA: rec.step {
// KDA-NEXT: rec.decay %g : !rec.key
// KDA-NEXT: rec.delta %k, %v scale %beta
// KDA-NEXT: rec.read %q

// GDN2-LABEL: rec.recurrence @gdn2 {
// GDN2: %[[WV:.*]] = rec.mul %w, %v : !rec.value, !rec.value
// GDN2: rec.step {
// GDN2-NEXT: rec.decay %g : !rec.key
// GDN2-NEXT: rec.rank1 %k, %a : !rec.key, !rec.key
// GDN2-NEXT: rec.write %k, %[[WV]]
// GDN2-NEXT: rec.read %q

// QED-LABEL: rec.recurrence @qed {
// QED: %lam = rec.input "lam" : !rec.scalar<head>
// QED: %[[BK:.*]] = rec.mul %b, %k
// QED: %[[BQ:.*]] = rec.mul %b, %q
// QED: %[[PERP:.*]] = rec.project_out %[[BQ]] along %k
// QED: %[[LP:.*]] = rec.mul %lam, %[[PERP]]
// QED: %[[A:.*]] = rec.add %[[BK]], %[[LP]]
// QED: rec.step {
// QED-NEXT: rec.decay %g : !rec.key
// QED-NEXT: rec.rank1 %k, %[[A]]
// QED-NEXT: rec.write %k,
// QED-NEXT: rec.read %q

// EDA-LABEL: rec.recurrence @eda {
// EDA: rec.step {
// EDA-NEXT: rec.decay %g : !rec.key
// EDA-NEXT: rec.erase %e scale %gamma
// EDA-NEXT: rec.delta %k, %v scale %beta
// EDA-NEXT: rec.read %q

// DP-LABEL: rec.recurrence @deltaproduct params {n = 2 : i64} {
// DP: %k = rec.input "k" : !rec.key<substep>
// DP: rec.step {
// DP-NEXT: rec.decay %g : !rec.scalar
// DP-NEXT: rec.repeat "n" {
// DP-NEXT: rec.delta %k, %v scale %beta : !rec.key<substep>, !rec.value<substep>, !rec.scalar<substep>
// DP-NEXT: }
// DP-NEXT: rec.read %q

// COMBA-LABEL: rec.recurrence @comba {
// COMBA: rec.step {
// COMBA-NEXT: rec.decay %g : !rec.scalar
// COMBA-NEXT: rec.rank1 %k, %p scale %beta
// COMBA-NEXT: rec.write %k, %v scale %beta
// COMBA-NEXT: rec.read %q

// DPLR-LABEL: rec.recurrence @dplr {
// DPLR: rec.step {
// DPLR-NEXT: rec.dplr %g, %a, %b : !rec.key, !rec.key, !rec.key
// DPLR-NEXT: rec.write %k, %v
// DPLR-NEXT: rec.read %q

// KDAP-LABEL: rec.recurrence @kda_prologue {
// KDAP: %[[QN:.*]] = rec.l2norm %q
// KDAP: %[[KN:.*]] = rec.l2norm %k
// KDAP: %[[B:.*]] = rec.sigmoid %beta
// KDAP: rec.softplus
// KDAP: %[[GATE:.*]] = rec.mul
// KDAP: rec.step {
// KDAP-NEXT: rec.decay %[[GATE]] : !rec.key
// KDAP-NEXT: rec.delta %[[KN]], %v scale %[[B]]
// KDAP-NEXT: rec.read %[[QN]]
