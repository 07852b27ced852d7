// RUN: rkc-opt %s --rec-normalize --split-input-file | FileCheck %s

// A zero gate and zero-strength factors do nothing and disappear; products
// with one and sums with zero fold.
// CHECK-LABEL: rec.recurrence @folds
rec.recurrence @folds {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %beta = rec.input "beta" : !rec.scalar
  %zero = rec.constant 0.0
  %one = rec.constant 1.0
  // CHECK-NOT: rec.mul
  %k1 = rec.mul %one, %k : !rec.scalar<head>, !rec.key
  // CHECK-NOT: rec.add
  %b0 = rec.add %beta, %zero : !rec.scalar, !rec.scalar<head>
  // CHECK: rec.step {
  // CHECK-NEXT: rec.delta %k, %v scale %beta
  // CHECK-NEXT: rec.read %q
  rec.step {
    rec.decay %zero : !rec.scalar<head>
    rec.erase %q scale %zero : !rec.key, !rec.scalar<head>
    rec.write %k, %v scale %zero : !rec.key, !rec.value, !rec.scalar<head>
    rec.delta %k1, %v scale %b0 : !rec.key, !rec.value, !rec.scalar
    rec.read %q : !rec.key
  }
}

// -----

// Adjacent decays merge into one (a scalar and a per-channel gate make a
// per-channel gate).
// CHECK-LABEL: rec.recurrence @merge_decays
rec.recurrence @merge_decays {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g1 = rec.input "g1" : !rec.scalar
  %g2 = rec.input "g2" : !rec.key
  // CHECK: %[[SUM:.*]] = rec.add %g1, %g2 : !rec.scalar, !rec.key
  // CHECK: rec.step {
  // CHECK-NEXT: rec.decay %[[SUM]] : !rec.key
  // CHECK-NEXT: rec.delta
  rec.step {
    rec.decay %g1 : !rec.scalar
    rec.decay %g2 : !rec.key
    rec.delta %k, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// A scalar decay commutes with a rank-1 factor that writes nothing, and
// moves in front of it; a per-channel decay does not.
// CHECK-LABEL: rec.recurrence @hoist_scalar_decay
rec.recurrence @hoist_scalar_decay {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %e = rec.input "e" : !rec.key
  %g = rec.input "g" : !rec.scalar
  %gc = rec.input "gc" : !rec.key
  // CHECK: rec.step {
  // CHECK-NEXT: rec.decay %g : !rec.scalar
  // CHECK-NEXT: rec.erase %e
  // CHECK-NEXT: rec.erase %k
  // CHECK-NEXT: rec.decay %gc : !rec.key
  rec.step {
    rec.erase %e : !rec.key
    rec.decay %g : !rec.scalar
    rec.erase %k : !rec.key
    rec.decay %gc : !rec.key
    rec.write %k, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// A scalar decay after a write does not commute with it and stays.
// CHECK-LABEL: rec.recurrence @keep_decay_after_write
rec.recurrence @keep_decay_after_write {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.scalar
  // CHECK: rec.step {
  // CHECK-NEXT: rec.delta
  // CHECK-NEXT: rec.decay %g
  rec.step {
    rec.delta %k, %v : !rec.key, !rec.value
    rec.decay %g : !rec.scalar
    rec.read %q : !rec.key
  }
}
