// DeltaProduct with n sub-steps a token:
//   S ← exp(g) S once per token, then for j = 0..n-1:
//   S ← (I - β_j k_j k_jᵀ) S + β_j k_j v_jᵀ ;  o_t = S_tᵀ (scale · q_t) after the last.
// k, v, beta have n rows a token: sub-step j of token t is row t·n + j.
rec.recurrence @deltaproduct params {n = 2} {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key<substep>
  %v = rec.input "v" : !rec.value<substep>
  %beta = rec.input "beta" : !rec.scalar<substep>
  %g = rec.input "g" : !rec.scalar
  rec.step {
    rec.decay %g : !rec.scalar
    rec.repeat "n" {
      rec.delta %k, %v scale %beta : !rec.key<substep>, !rec.value<substep>, !rec.scalar<substep>
    }
    rec.read %q : !rec.key
  }
}
