// Erase-then-Delta Attention:
//   S_t = (I - β k kᵀ)(I - γ e eᵀ) Diag(exp g) S_{t-1} + β k vᵀ ;  o_t = S_tᵀ (scale · q_t)
// Decay first, then the erase at the learned address e, then the delta write.
rec.recurrence @eda {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.key
  %beta = rec.input "beta" : !rec.scalar
  %e = rec.input "e" : !rec.key
  %gamma = rec.input "gamma" : !rec.scalar
  rec.step {
    rec.decay %g : !rec.key
    rec.erase %e scale %gamma : !rec.key, !rec.scalar
    rec.delta %k, %v scale %beta : !rec.key, !rec.value, !rec.scalar
    rec.read %q : !rec.key
  }
}
