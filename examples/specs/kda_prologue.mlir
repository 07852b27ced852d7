// KDA the way models run it, with the prologue fused into the kernel:
//   q̂ = l2norm(q), k̂ = l2norm(k), β = sigmoid(beta),
//   g' = -exp(A_log_h) · softplus(g + dt_bias_h)       (per key channel)
//   S_t = (I - β k̂ k̂ᵀ) Diag(exp g') S_{t-1} + β k̂ vᵀ ;  o_t = S_tᵀ (scale · q̂_t)
// Inputs: q, k [B,T,H,dk], v [B,T,H,dv], g [B,T,H,dk] (raw), beta [B,T,H] (raw logits),
// A_log [H], dt_bias [H, dk].
rec.recurrence @kda_prologue {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.key
  %beta = rec.input "beta" : !rec.scalar
  %A_log = rec.input "A_log" : !rec.scalar<head>
  %dt_bias = rec.input "dt_bias" : !rec.key<head>
  %qn = rec.l2norm %q : !rec.key
  %kn = rec.l2norm %k : !rec.key
  %beta_gate = rec.sigmoid %beta : !rec.scalar
  %g_biased = rec.add %g, %dt_bias : !rec.key, !rec.key<head>
  %g_soft = rec.softplus %g_biased : !rec.key
  %A = rec.exp %A_log : !rec.scalar<head>
  %neg_A = rec.neg %A : !rec.scalar<head>
  %gate = rec.mul %neg_A, %g_soft : !rec.scalar<head>, !rec.key
  rec.step {
    rec.decay %gate : !rec.key
    rec.delta %kn, %v scale %beta_gate : !rec.key, !rec.value, !rec.scalar
    rec.read %qn : !rec.key
  }
}
