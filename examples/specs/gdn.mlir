// Gated DeltaNet:  S_t = exp(g) (I - β k kᵀ) S_{t-1} + β k vᵀ ;  o_t = S_tᵀ (scale · q_t)
// g is a scalar log-space gate per token and head; a scalar decay commutes with
// the rank-1 factor, so it is listed first (it acts first).
rec.recurrence @gdn {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.scalar
  %beta = rec.input "beta" : !rec.scalar
  rec.step {
    rec.decay %g : !rec.scalar
    rec.delta %k, %v scale %beta : !rec.key, !rec.value, !rec.scalar
    rec.read %q : !rec.key
  }
}
