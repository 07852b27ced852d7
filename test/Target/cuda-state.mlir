// The scan's state slice. In the kernel for bf16 products of a staged scan
// whose warps are DK / 16 (KDA's default schedule: 128 keys, 8 warps), the
// slice lives in registers, warp w holding rows 16w..16w+15 as mma
// accumulators; products read its bf16 shadow, which the state update
// writes after accumulating into the registers. The float32 kernel keeps it
// in shared memory.
// RUN: rm -rf %t && rkc compile %rkc_src/examples/specs/kda.mlir -o %t --no-fatbin > /dev/null
// RUN: FileCheck %s --input-file=%t/kda.cu
// RUN: rm -rf %t.f && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.f --no-fatbin --factor-products 1 > /dev/null
// RUN: FileCheck %s --check-prefix=FACTORED --input-file=%t.f/kda.cu
// CHECK-LABEL: void prefill(const Params &p)
// CHECK: rkc::tile::RegisterState<BV / 8> sreg;
// CHECK-NEXT: __nv_bfloat16 *const S16 = reinterpret_cast<__nv_bfloat16 *>(smem);
// CHECK-NEXT: if constexpr (TensorCores) {
// CHECK: sreg.acc[nb][q] = entering ? entering[(enteringRow +
// CHECK: rkc::tile::storeShadow(sreg, S16, SLD);
// CHECK-NEXT: } else {
// CHECK: S[(e / BV) * SLD + e % BV] = entering ?
// The products of S (W S, Q S) read the shadow in the kernel for bf16
// products.
// CHECK: if constexpr (TensorCores) {
// CHECK: rkc::tile::matmulSharedRight<TensorCores, 128>({{.*}}, S16, SLD, 32);
// CHECK-NEXT: } else {
// CHECK: rkc::tile::matmulSharedRight<TensorCores, 128>({{.*}}, S, SLD, 32);
// The state update: decayed S plus the two products, in registers.
// CHECK: if constexpr (TensorCores) {
// The update is the chunk's last op: the next chunk's first barrier fences
// it (the float32 kernel's keeps its own: its end reads S from shared
// memory).
// CHECK: rkc::tile::updateStatePair<32, 32>(sreg, [[K:tile[0-9]+]], {{.*}}, DK, rkc::tile::RowDecay{{[{]}}[[G:tile[0-9]+]], 128, L}, S16, SLD, /*barrier=*/false);
// CHECK-NEXT: // (no barrier: the next chunk starts with one)
// CHECK-NEXT: } else {
// CHECK: rkc::tile::matmulPair<TensorCores, 32, 32>([[K]], {{.*}}, true, S, SLD, S, rkc::tile::RowDecay{{[{]}}[[G]], 128, L}, SLD);
// CHECK: sreg.acc[nb][q];
// CHECK-LABEL: rkc_kda_prefill_kernel(

// Without a gate (DeltaNet) the state update still adds S itself as the
// products store: one pass, S = A1 B1 + A2 B2 + S, no sum tile.
// RUN: rm -rf %t.dn && rkc compile %rkc_src/examples/specs/deltanet.mlir -o %t.dn --no-fatbin > /dev/null
// RUN: FileCheck %s --check-prefix=DN --input-file=%t.dn/deltanet.cu
// DN-LABEL: void prefill(const Params &p)
// DN: rkc::tile::updateStatePair<32, 32>(sreg, {{.*}}, DK, rkc::tile::RowDecay{}, S16, SLD, /*barrier=*/false);
// DN: rkc::tile::matmulPair<TensorCores, 32, 32>({{.*}}, true, S, SLD, S, rkc::tile::RowDecay{}, SLD);
// DN-NOT: S[(e / BV) * SLD + e % BV] + tile
// DN-LABEL: rkc_deltanet_prefill_kernel(

// With TF32 products (float32 operands) the state stays in shared memory.
// RUN: rm -rf %t.tf && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.tf --no-fatbin --products tf32 > /dev/null
// RUN: FileCheck %s --check-prefix=TF32 --input-file=%t.tf/kda.cu
// TF32-NOT: RegisterState
// TF32-NOT: updateState

// The update in registers runs its products on bf16 tensor cores whole: a
// chunk of 12 rows (not whole 16-row steps) keeps the state in shared
// memory.
// RUN: rm -rf %t.12 && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.12 --no-fatbin --chunk-size 12 > /dev/null
// RUN: FileCheck %s --check-prefix=C12 --input-file=%t.12/kda.cu
// C12-NOT: RegisterState
// C12-NOT: updateState

// With --factor-products the output is one product of A_qk and U' + V,
// stored to o with no barrier before the state update (it writes only o and
// reads no S), and the update is one product into the registers.
// FACTORED-LABEL: void prefill(const Params &p)
// FACTORED: rkc::tile::matmulSharedRight<TensorCores, 128>
// FACTORED: rkc::tile::matmul<TensorCores, 32>({{.*}}OutputRows{p, t0, eos, oBase, oPairs}{{.*}}/*barrier=*/false);
// FACTORED-NEXT: // (no barrier: the state update next reads nothing this wrote, nor writes what it read)
// FACTORED: rkc::tile::updateStateOne<32>(sreg,
// FACTORED-NOT: matmulPair
// FACTORED-LABEL: void prep(const Params &p)
