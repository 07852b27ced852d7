// Comba:  S_t = (I - β k pᵀ) exp(g) S_{t-1} + β k vᵀ ;  o_t = S_tᵀ (scale · q_t)
// The rank-1 factor reads the state at p and writes along k; g is a scalar gate.
rec.recurrence @comba {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %p = rec.input "p" : !rec.key
  %g = rec.input "g" : !rec.scalar
  %beta = rec.input "beta" : !rec.scalar
  rec.step {
    rec.decay %g : !rec.scalar
    rec.rank1 %k, %p scale %beta : !rec.key, !rec.key, !rec.scalar
    rec.write %k, %v scale %beta : !rec.key, !rec.value, !rec.scalar
    rec.read %q : !rec.key
  }
}
