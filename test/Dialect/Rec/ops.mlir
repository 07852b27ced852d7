// RUN: rkc-opt %s | rkc-opt | FileCheck %s
// RUN: rkc-opt %s --mlir-print-op-generic | rkc-opt | FileCheck %s

// Every op of the dialect, printed and parsed back.

// CHECK-LABEL: rec.recurrence @all_factors scale 2.500000e-01 params {n = 3 : i64} {
rec.recurrence @all_factors scale 0.25 params {n = 3} {
  // CHECK: %q = rec.input "q" : !rec.key
  %q = rec.input "q" : !rec.key
  // CHECK: %k = rec.input "k" : !rec.key
  %k = rec.input "k" : !rec.key
  // CHECK: %v = rec.input "v" : !rec.value
  %v = rec.input "v" : !rec.value
  // CHECK: %g = rec.input "g" : !rec.key
  %g = rec.input "g" : !rec.key
  // CHECK: %gs = rec.input "gs" : !rec.scalar
  %gs = rec.input "gs" : !rec.scalar
  // CHECK: %ks = rec.input "ks" : !rec.key<substep>
  %ks = rec.input "ks" : !rec.key<substep>
  // CHECK: %vs = rec.input "vs" : !rec.value<substep>
  %vs = rec.input "vs" : !rec.value<substep>
  // CHECK: %bs = rec.input "bs" : !rec.scalar<substep>
  %bs = rec.input "bs" : !rec.scalar<substep>
  // CHECK: %lam = rec.input "lam" : !rec.scalar<head>
  %lam = rec.input "lam" : !rec.scalar<head>
  // CHECK: %bias = rec.input "bias" : !rec.key<head>
  %bias = rec.input "bias" : !rec.key<head>
  // CHECK: %wh = rec.input "wh" : !rec.value<head>
  %wh = rec.input "wh" : !rec.value<head>

  // CHECK: %[[C:.*]] = rec.constant 5.000000e-01
  %c = rec.constant 0.5
  // CHECK: %[[ADD:.*]] = rec.add %g, %bias : !rec.key, !rec.key<head>
  %add = rec.add %g, %bias : !rec.key, !rec.key<head>
  // CHECK: %[[SUB:.*]] = rec.sub %[[ADD]], %k : !rec.key, !rec.key
  %sub = rec.sub %add, %k : !rec.key, !rec.key
  // CHECK: %[[MUL:.*]] = rec.mul %lam, %[[SUB]] : !rec.scalar<head>, !rec.key
  %mul = rec.mul %lam, %sub : !rec.scalar<head>, !rec.key
  // CHECK: %[[NEG:.*]] = rec.neg %[[MUL]] : !rec.key
  %neg = rec.neg %mul : !rec.key
  // CHECK: %[[EXP:.*]] = rec.exp %lam : !rec.scalar<head>
  %exp = rec.exp %lam : !rec.scalar<head>
  // CHECK: %[[SIG:.*]] = rec.sigmoid %gs : !rec.scalar
  %sig = rec.sigmoid %gs : !rec.scalar
  // CHECK: rec.softplus %g : !rec.key
  %sp = rec.softplus %g : !rec.key
  // CHECK: %[[LS:.*]] = rec.logsigmoid %g : !rec.key
  %ls = rec.logsigmoid %g : !rec.key
  // CHECK: %[[QN:.*]] = rec.l2norm %q : !rec.key
  %qn = rec.l2norm %q : !rec.key
  // CHECK: %[[KN:.*]] = rec.l2norm %k {eps = 1.000000e-03 : f64} : !rec.key
  %kn = rec.l2norm %k {eps = 1.0e-3 : f64} : !rec.key
  // CHECK: %[[DOT:.*]] = rec.dot %q, %k : !rec.key, !rec.key
  %dot = rec.dot %q, %k : !rec.key, !rec.key
  // CHECK: %[[PERP:.*]] = rec.project_out %q along %[[KN]] : !rec.key, !rec.key
  %perp = rec.project_out %q along %kn : !rec.key, !rec.key
  // CHECK: %[[WV:.*]] = rec.mul %wh, %v : !rec.value<head>, !rec.value
  %wv = rec.mul %wh, %v : !rec.value<head>, !rec.value
  // A substep value combined with a token value is a substep value.
  // CHECK: %[[BS2:.*]] = rec.mul %[[C]], %bs : !rec.scalar<head>, !rec.scalar<substep>
  %bs2 = rec.mul %c, %bs : !rec.scalar<head>, !rec.scalar<substep>

  // CHECK: rec.step {
  rec.step {
    // CHECK-NEXT: rec.decay %g : !rec.key
    rec.decay %g : !rec.key
    // CHECK-NEXT: rec.decay %gs : !rec.scalar
    rec.decay %gs : !rec.scalar
    // CHECK-NEXT: rec.dplr %[[LS]], %[[PERP]], %[[KN]] : !rec.key, !rec.key, !rec.key
    rec.dplr %ls, %perp, %kn : !rec.key, !rec.key, !rec.key
    // CHECK-NEXT: rec.erase %[[QN]] scale %[[SIG]] : !rec.key, !rec.scalar
    rec.erase %qn scale %sig : !rec.key, !rec.scalar
    // CHECK-NEXT: rec.erase %[[KN]] : !rec.key
    rec.erase %kn : !rec.key
    // CHECK-NEXT: rec.rank1 %[[KN]], %[[NEG]] : !rec.key, !rec.key
    rec.rank1 %kn, %neg : !rec.key, !rec.key
    // CHECK-NEXT: rec.rank1 %[[KN]], %[[QN]] scale %[[DOT]] : !rec.key, !rec.key, !rec.scalar
    rec.rank1 %kn, %qn scale %dot : !rec.key, !rec.key, !rec.scalar
    // CHECK-NEXT: rec.write %[[KN]], %[[WV]] scale %[[EXP]] : !rec.key, !rec.value, !rec.scalar<head>
    rec.write %kn, %wv scale %exp : !rec.key, !rec.value, !rec.scalar<head>
    // CHECK-NEXT: rec.repeat "n" {
    rec.repeat "n" {
      // CHECK-NEXT: rec.delta %ks, %vs scale %[[BS2]] : !rec.key<substep>, !rec.value<substep>, !rec.scalar<substep>
      rec.delta %ks, %vs scale %bs2 : !rec.key<substep>, !rec.value<substep>, !rec.scalar<substep>
      // CHECK-NEXT: rec.delta %[[KN]], %v : !rec.key, !rec.value
      rec.delta %kn, %v : !rec.key, !rec.value
    }
    // CHECK: rec.read %[[QN]] : !rec.key
    rec.read %qn : !rec.key
  }
}

// A recurrence may also stand at the top level of a file, next to others.
// CHECK-LABEL: rec.recurrence @minimal {
rec.recurrence @minimal {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %k, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}
