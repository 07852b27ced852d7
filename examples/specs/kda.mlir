// Kimi Delta Attention:  S_t = (I - β k kᵀ) Diag(exp g) S_{t-1} + β k vᵀ ;  o_t = S_tᵀ (scale · q_t)
// g [B, T, H, dk] is a per-channel log-space gate.
rec.recurrence @kda {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.key
  %beta = rec.input "beta" : !rec.scalar
  rec.step {
    rec.decay %g : !rec.key
    rec.delta %k, %v scale %beta : !rec.key, !rec.value, !rec.scalar
    rec.read %q : !rec.key
  }
}
