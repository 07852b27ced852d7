// Gated DeltaNet-2:  S_t = (I - k aᵀ) Diag(exp g) S_{t-1} + k (w ⊙ v)ᵀ ;  o_t = S_tᵀ (scale · q_t)
// The rank-1 factor reads the state at the erase vector a and writes along k.
rec.recurrence @gdn2 {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.key
  %a = rec.input "a" : !rec.key
  %w = rec.input "w" : !rec.value
  %wv = rec.mul %w, %v : !rec.value, !rec.value
  rec.step {
    rec.decay %g : !rec.key
    rec.rank1 %k, %a : !rec.key, !rec.key
    rec.write %k, %wv : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}
