// A decay_state folded into the state update's product reads the gate's last
// row where the product runs, not where decay_state stands. In KDA's unstaged
// scan at chunk 64 and value tile 64 the erase rows (K̃) are read back from
// the workspace in between, into the floats the gate's tile had: there the
// fold would read K̃ as the gate, so decay_state scales S into a tile of its
// own first.
// RUN: rm -rf %t && rkc compile %rkc_src/examples/specs/kda.mlir -o %t --no-fatbin --chunk-size 64 --value-tile 64 > /dev/null
// RUN: FileCheck %s --input-file=%t/kda.cu
// CHECK-LABEL: void prefill(const Params &p)
// CHECK: float *const [[GATE:tile[0-9]+]] = smem + [[AT:[0-9]+]]; // !rec.tile<chunk, key>
// CHECK: float *const [[DECAYED:tile[0-9]+]] = smem + {{[0-9]+}}; // !rec.tile<key, value>
// CHECK: float *const [[ERASE:tile[0-9]+]] = smem + [[AT]]; // !rec.tile<chunk, key>
// CHECK: rkc::tile::decayState(S, 128, 64, [[GATE]], 128, L, [[DECAYED]], SLD);
// CHECK: from the prep kernel: [[ERASE]]
// CHECK: rkc::tile::matmulPair<TensorCores, 64, 64>([[ERASE]], {{.*}}, true, S, SLD, [[DECAYED]]);
// CHECK-NOT: RowDecay
// CHECK-LABEL: rkc_kda_prefill_kernel(

// Where the gate's tile stays (the default schedule stages it), the fold
// stands: S decayed as the product stores.
// RUN: rm -rf %t.32 && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.32 --no-fatbin > /dev/null
// RUN: FileCheck %s --check-prefix=STAGED --input-file=%t.32/kda.cu
// STAGED: (scaled from S by the product below)
// STAGED: true, S, SLD, S, rkc::tile::RowDecay{
