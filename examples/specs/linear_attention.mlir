// Linear attention:  S_t = S_{t-1} + k_t v_tᵀ ;  o_t = S_tᵀ (scale · q_t)
rec.recurrence @linear_attention {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %k, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}
