// The scan's state slice. In the kernel for bf16 products of a staged scan
// whose warps are DK / 16 (KDA's default schedule: 128 keys, 8 warps), or
// two or four times that, the slice lives in registers, a 16-row block of it
// a warp (or split by columns among two or four) as mma accumulators;
// products read its bf16 shadow, which the state update writes after
// accumulating into the registers. The float32 kernel keeps it in shared
// memory.
// RUN: rm -rf %t && rkc compile %rkc_src/examples/specs/kda.mlir -o %t --no-fatbin > /dev/null
// RUN: FileCheck %s --input-file=%t/kda.cu
// RUN: rm -rf %t.f && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.f --no-fatbin --factor-products 1 > /dev/null
// RUN: FileCheck %s --check-prefix=FACTORED --input-file=%t.f/kda.cu
// CHECK-LABEL: void prefill(const Params &p)
// CHECK: constexpr int SPLITS = THREADS / 32 / (DK / 16);
// CHECK-NEXT: rkc::tile::RegisterState<BV / 8 / SPLITS, SPLITS> sreg;
// CHECK-NEXT: __nv_bfloat16 *const S16 = reinterpret_cast<__nv_bfloat16 *>(smem);
// CHECK-NEXT: if constexpr (TensorCores) {
// CHECK: for (int nb = 0; nb < sreg.kColumnBlocks; ++nb)
// CHECK: sreg.acc[nb][q] = entering ? entering[(enteringRow +
// CHECK-NEXT: sreg.row(q)) * DV + v0 + sreg.col(nb, q)] : 0.f;
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
// CHECK: leaving[(leavingRow + sreg.row(q)) * DV + v0 + sreg.col(nb, q)] =
// CHECK-NEXT: sreg.acc[nb][q];
// CHECK-LABEL: rkc_kda_prefill_kernel(

// More warps than DK / 16 split each row block by columns: 64 keys at 256
// threads (two warps a row block, 16 columns each) and 128 keys at 512 (the
// same), both in registers; 128 keys at 1024 threads would leave a warp 4
// columns, less than an mma's 8, and at 384 threads the warps do not split
// the row blocks alike: the slice stays in shared memory.
// RUN: rm -rf %t.64 && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.64 --no-fatbin --dk 64 --dv 64 > /dev/null
// RUN: FileCheck %s --check-prefix=SPLIT --input-file=%t.64/kda.cu
// RUN: rm -rf %t.512 && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.512 --no-fatbin --threads 512 > /dev/null
// RUN: FileCheck %s --check-prefix=SPLIT --input-file=%t.512/kda.cu
// RUN: rm -rf %t.1024 && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.1024 --no-fatbin --threads 1024 --value-tile 16 > /dev/null
// RUN: FileCheck %s --check-prefix=SHARED --input-file=%t.1024/kda.cu
// RUN: rm -rf %t.384 && rkc compile %rkc_src/examples/specs/kda.mlir -o %t.384 --no-fatbin --threads 384 > /dev/null
// RUN: FileCheck %s --check-prefix=SHARED --input-file=%t.384/kda.cu
// SPLIT-LABEL: void prefill(const Params &p)
// SPLIT: rkc::tile::RegisterState<BV / 8 / SPLITS, SPLITS> sreg;
// SPLIT: rkc::tile::updateStatePair<{{[0-9]+}}, {{[0-9]+}}>(sreg,
// SHARED-NOT: RegisterState
// SHARED-NOT: updateState

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
