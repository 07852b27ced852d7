// Diagonal plus low rank (the RWKV-7 family):
//   S_t = (Diag(exp g) + a bᵀ) S_{t-1} + k vᵀ ;  o_t = S_tᵀ (scale · q_t)
// b reads the state (before the decay), a writes the read back.
rec.recurrence @dplr {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %a = rec.input "a" : !rec.key
  %b = rec.input "b" : !rec.key
  %g = rec.input "g" : !rec.key
  rec.step {
    rec.dplr %g, %a, %b : !rec.key, !rec.key, !rec.key
    rec.write %k, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}
