// A token of two factors that read the state differently: a DPLR factor,
// whose b reads the state before its decay, then a general rank-1 factor
// after a decay of its own, whose read vector carries that decay
// (b = e^h ⊙ y). rec-chunk must keep the exclusive cumulative decay and
// the read rows b for such a tile (chunk.mlir, MIXED); the chunk executor
// checks the result against the interpreter (LoweringTest, MixedReads).
rec.recurrence @mixed_reads {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %a = rec.input "a" : !rec.key
  %b = rec.input "b" : !rec.key
  %g = rec.input "g" : !rec.key
  %h = rec.input "h" : !rec.key
  %y = rec.input "y" : !rec.key
  %beta = rec.input "beta" : !rec.scalar
  rec.step {
    rec.dplr %g, %a, %b : !rec.key, !rec.key, !rec.key
    rec.decay %h : !rec.key
    rec.rank1 %k, %y scale %beta : !rec.key, !rec.key, !rec.scalar
    rec.write %k, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}
