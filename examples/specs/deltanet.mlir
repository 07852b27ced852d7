// DeltaNet:  S_t = (I - β k kᵀ) S_{t-1} + β k vᵀ ;  o_t = S_tᵀ (scale · q_t)
rec.recurrence @deltanet {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %beta = rec.input "beta" : !rec.scalar
  rec.step {
    rec.delta %k, %v scale %beta : !rec.key, !rec.value, !rec.scalar
    rec.read %q : !rec.key
  }
}
