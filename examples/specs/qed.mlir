// QED: Gated DeltaNet-2 with a query-derived erase direction,
//   a = b ⊙ k + λ_h P⊥_k(b ⊙ q),   P⊥_k(x) = x - k (kᵀx)   (the raw q, unscaled)
//   S_t = (I - k aᵀ) Diag(exp g) S_{t-1} + k (w ⊙ v)ᵀ ;  o_t = S_tᵀ (scale · q_t)
rec.recurrence @qed {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.key
  %b = rec.input "b" : !rec.key
  %w = rec.input "w" : !rec.value
  %lam = rec.input "lam" : !rec.scalar<head>
  %bk = rec.mul %b, %k : !rec.key, !rec.key
  %bq = rec.mul %b, %q : !rec.key, !rec.key
  %bq_perp = rec.project_out %bq along %k : !rec.key, !rec.key
  %query_part = rec.mul %lam, %bq_perp : !rec.scalar<head>, !rec.key
  %a = rec.add %bk, %query_part : !rec.key, !rec.key
  %wv = rec.mul %w, %v : !rec.value, !rec.value
  rec.step {
    rec.decay %g : !rec.key
    rec.rank1 %k, %a : !rec.key, !rec.key
    rec.write %k, %wv : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}
