// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-interleave --rec-chunk=chunk-size=32 | FileCheck %s --check-prefix=EDA
// RUN: rkc-opt %rkc_src/examples/specs/deltanet.mlir --rec-interleave --rec-chunk | FileCheck %s --check-prefix=DELTANET
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-interleave --rec-chunk | FileCheck %s --check-prefix=GDN
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-interleave --rec-chunk | FileCheck %s --check-prefix=KDA
// RUN: rkc-opt %rkc_src/examples/specs/gdn2.mlir --rec-interleave --rec-chunk | FileCheck %s --check-prefix=GDN2
// RUN: rkc-opt %rkc_src/examples/specs/dplr.mlir --rec-interleave --rec-chunk | FileCheck %s --check-prefix=DPLR
// RUN: rkc-opt %rkc_src/examples/specs/linear_attention.mlir --rec-interleave --rec-chunk | FileCheck %s --check-prefix=LA
// RUN: rkc-opt %rkc_src/examples/specs/deltaproduct.mlir --rec-interleave=params=n=3 --rec-chunk=chunk-size=16 | FileCheck %s --check-prefix=DP
// RUN: rkc-opt %S/Inputs/mixed-reads.mlir --rec-interleave --rec-chunk=chunk-size=8 | FileCheck %s --check-prefix=MIXED

// EDA, chunks of 32 tokens = 64 sub-step rows, two slots a token: the gate
// lives on slot 0; values, keys and their strengths on slot 1 only (the
// erase sub-step writes nothing); one Gram product of the symmetric factors
// serves A_ba and A_bk; the output has the read rows (slot 1) alone.
// EDA: rec.chunked chunk_size(32) substeps_per_token(2) table {
// EDA: } body {
// EDA-NEXT: ^bb0(%[[S0:.*]]: !rec.tile<key, value>):
// EDA-NEXT: %[[G0:.*]] = rec.chunk.rows gate : !rec.tile<chunk[0], key>
// EDA-NEXT: %[[G:.*]] = rec.chunk.cumsum %[[G0]] : (!rec.tile<chunk[0], key>) -> !rec.tile<chunk, key>
// Both factors read where they erase, after the decay (b = e^g ⊙ x): the
// read rows are the erase rows decayed by the inclusive sum, so there is no
// exclusive sum and no read row of its own.
// EDA-NEXT: %[[KAPPA:.*]] = rec.chunk.rows write_strength : !rec.tile<chunk[1], one>
// EDA-NEXT: %[[V:.*]] = rec.chunk.rows value : !rec.tile<chunk[1], value>
// EDA: %[[X:.*]] = rec.chunk.rows erase_along : !rec.tile<chunk, key>
// EDA-NOT: rec.chunk.rows read
// EDA: %[[M:.*]] = rec.chunk.gram %[[X]], %[[X]] decay(%[[G]], %[[G]]) mask(strict) : {{.*}} -> !rec.tile<chunk, chunk>
// EDA: %[[ABA:.*]] = rec.chunk.scale_cols %[[M]], {{.*}} -> !rec.tile<chunk, chunk>
// EDA-NEXT: rec.chunk.ut_inverse %[[ABA]]
// EDA: rec.chunk.decay_rows %[[X]], %[[G]]
// EDA: %[[ABK:.*]] = rec.chunk.scale_cols %[[M]], %[[KAPPA]] : (!rec.tile<chunk, chunk>, !rec.tile<chunk[1], one>) -> !rec.tile<chunk, chunk[1]>
// EDA-NEXT: rec.chunk.matmul %[[ABK]], %[[V]] : (!rec.tile<chunk, chunk[1]>, !rec.tile<chunk[1], value>) -> !rec.tile<chunk, value>
// EDA: %[[Q:.*]] = rec.chunk.rows query : !rec.tile<chunk[1], key>
// EDA: rec.chunk.gram %[[Q]], %[[X]] decay(%[[G]], %[[G]]) mask(lower) : {{.*}} -> !rec.tile<chunk[1], chunk>
// EDA-NOT: rec.chunk.gram
// EDA-NOT: exclusive
// EDA: rec.chunk.output %{{.*}} : !rec.tile<chunk[1], value>
// EDA: rec.chunk.yield %{{.*}} : !rec.tile<key, value>

// DeltaNet has no decay: no gate rows, no cumulative sums, no exponentials.
// DELTANET: rec.chunked chunk_size(64) substeps_per_token(1)
// DELTANET: } body {
// DELTANET-NOT: gate
// DELTANET-NOT: cumsum
// DELTANET-NOT: decay
// DELTANET: rec.chunk.gram %{{.*}}, %{{.*}} mask(strict) : (!rec.tile<chunk, key>, !rec.tile<chunk, key>) -> !rec.tile<chunk, chunk>
// DELTANET-NOT: decay
// DELTANET: rec.chunk.yield

// GDN's scalar gate gives per-row scalar tiles: one exponential per pair of
// rows, not per channel.
// GDN: %[[G0:.*]] = rec.chunk.rows gate : !rec.tile<chunk, one>
// GDN: rec.chunk.cumsum %[[G0]] : (!rec.tile<chunk, one>) -> !rec.tile<chunk, one>
// GDN: rec.chunk.gram {{.*}} decay({{.*}}) mask(strict) : (!rec.tile<chunk, key>, !rec.tile<chunk, key>, !rec.tile<chunk, one>, !rec.tile<chunk, one>)
// GDN-NOT: !rec.tile<chunk, key>, !rec.tile<chunk, key>, !rec.tile<chunk, key>, !rec.tile<chunk, key>

// KDA's gate is per channel.
// KDA: rec.chunk.rows gate : !rec.tile<chunk, key>
// Its factor is a delta rule's: it writes along its erase direction with
// the erase's strength, so the key and strength rows are loaded once (β k
// is the scaled erase rows), the WY vectors carry U's sign (-T⁻¹, so that
// U' = -U), the output weighs U' by +β (A_qa is A_qk), and the state's erase
// and write terms share one tile: S_L = e^{G_L} S₀ + K̃ᵀ U' + K̃ᵀ V.
// KDA: %[[BETA:.*]] = rec.chunk.rows strength
// KDA-NEXT: %[[X:.*]] = rec.chunk.rows erase_along
// KDA: %[[K:.*]] = rec.chunk.scale_rows %[[X]], %[[BETA]]
// KDA-NOT: rec.chunk.rows key
// KDA-NOT: rec.chunk.rows write_strength
// KDA-NOT: rec.chunk.rows read
// KDA: rec.chunk.gram %[[X]], %[[X]] decay({{.*}}) mask(strict) : (!rec.tile<chunk, key>, !rec.tile<chunk, key>, !rec.tile<chunk, key>, !rec.tile<chunk, key>)
// KDA: %[[TINV:.*]] = rec.chunk.ut_inverse
// KDA-NEXT: rec.chunk.neg %[[TINV]]
// KDA: %[[MQ:.*]] = rec.chunk.gram {{.*}} mask(lower)
// KDA-NEXT: %[[AQ:.*]] = rec.chunk.scale_cols %[[MQ]], %[[BETA]]
// KDA: rec.chunk.matmul %[[AQ]], %[[U:[0-9]+]]
// KDA: rec.chunk.matmul %[[AQ]], %[[V:[0-9]+]]
// KDA: %[[KE:.*]] = rec.chunk.decay_to_end %[[K]],
// KDA-NEXT: rec.chunk.matmul %[[KE]], %[[U]] {transpose_lhs}
// KDA: rec.chunk.matmul %[[KE]], %[[V]] {transpose_lhs}

// GDN-2's factor is general: it reads at a (the read rows differ from the
// erase rows), but it erases along k, where it also writes, so A_ba and
// A_bk still share one Gram product (and A_qa, A_qk another).
// It reads at a after the decay, so its read rows are a as it is, decayed
// by the inclusive sum (G_t), not a ⊙ e^g by the exclusive one.
// GDN2-NOT: exclusive
// GDN2: %[[G:.*]] = rec.chunk.cumsum
// GDN2: %[[X:.*]] = rec.chunk.rows erase_along : !rec.tile<chunk, key>
// GDN2: %[[B:.*]] = rec.chunk.rows read_along : !rec.tile<chunk, key>
// GDN2: rec.chunk.gram %[[B]], %[[X]] decay(%[[G]], %[[G]])
// GDN2: rec.chunk.gram
// GDN2-NOT: rec.chunk.gram

// DPLR erases along a but writes along k: four Gram products. Its b reads
// the state before the decay: the read rows meet it through G_{t-1}.
// DPLR: rec.chunk.cumsum {{.*}} {exclusive}
// DPLR: rec.chunk.rows read :
// DPLR-COUNT-4: rec.chunk.gram
// DPLR-NOT: rec.chunk.gram

// Linear attention has no rank-1 factor: no UT inverse, no WY vectors.
// Linear attention writes with strength 1 (a rec.constant): K is the key
// rows as they are, no strength rows and no scaling.
// LA-NOT: write_strength
// LA-NOT: scale_rows
// LA: %[[V:.*]] = rec.chunk.rows value : !rec.tile<chunk, value>
// LA-NEXT: %[[K:.*]] = rec.chunk.rows key : !rec.tile<chunk, key>
// LA-NOT: ut_inverse
// LA: rec.chunk.gram %{{.*}}, %[[K]] mask(lower)
// LA-NOT: ut_inverse
// LA: rec.chunk.yield

// DeltaProduct n = 3: the gate on slot 0, the output on slot 2.
// DP: rec.chunked chunk_size(16) substeps_per_token(3)
// DP: rec.chunk.rows gate : !rec.tile<chunk[0], one>
// DP: rec.chunk.rows query : !rec.tile<chunk[2], key>
// DP: rec.chunk.output %{{.*}} : !rec.tile<chunk[2], value>

// A DPLR factor (b reads before its decay) and a factor whose read vector
// carries its decay, in one token: the read rows of both slots are b, met
// through the exclusive sum (for the second slot b = e^h ⊙ y, whose e^h the
// row load applies); no read_along rows.
// MIXED: rec.chunked chunk_size(8) substeps_per_token(2)
// MIXED: %[[G:.*]] = rec.chunk.cumsum
// MIXED-NEXT: %[[GP:.*]] = rec.chunk.cumsum %{{.*}} {exclusive}
// MIXED-NOT: read_along
// MIXED: %[[B:.*]] = rec.chunk.rows read : !rec.tile<chunk, key>
// MIXED: rec.chunk.gram %[[B]], %{{.*}} decay(%[[GP]], %[[G]]) mask(strict)
// MIXED: rec.chunk.decay_rows %[[B]], %[[GP]]
