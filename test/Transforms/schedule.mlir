// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked=chunk-size=16 --rec-schedule="dk=64 dv=64 value-tile=32" | FileCheck %s
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-decode --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=DECODE
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked=chunk-size=64 --rec-schedule="dk=256 dv=256" 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked --rec-schedule="dk=100" 2>&1 | FileCheck %s --check-prefix=DK
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked --rec-schedule="value-tile=48" 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked --rec-schedule="threads=48" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked --rec-schedule="prefetch=2" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked --rec-schedule="products=fp8" 2>&1 | FileCheck %s --check-prefix=PRODUCTS
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-decode --rec-schedule="decode-blocks=-3" 2>&1 | FileCheck %s --check-prefix=BLOCKS
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-decode --rec-schedule="threads=128 decode-blocks=0" | FileCheck %s --check-prefix=BLOCKS0
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-decode --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=QUADS
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-decode --rec-schedule="dk=128 dv=128 decode-quads=0" | FileCheck %s --check-prefix=NOQUADS
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-decode --rec-schedule="dk=128 dv=128 decode-quads=1" | FileCheck %s --check-prefix=KDAQUADS
// RUN: not rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-decode --rec-schedule="decode-quads=3" 2>&1 | FileCheck %s --check-prefix=BADQUADS
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked="chunk-size=16" --rec-schedule="products=bf16" | FileCheck %s --check-prefix=BF16
// RUN: not rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked=chunk-size=8 --rec-schedule="dk=64 dv=128 value-tile=128 threads=64" 2>&1 | FileCheck %s --check-prefix=THREADSTILE
// RUN: rkc-opt %rkc_src/examples/specs/gdn2.mlir --rec-lower-chunked=chunk-size=64 --rec-split-scan=keep-rows=1 --rec-schedule="dk=128 dv=128 value-tile=64" | FileCheck %s --check-prefix=INPLACE
// RUN: rkc-opt %rkc_src/examples/specs/gdn2.mlir --rec-lower-chunked=chunk-size=64 --rec-split-scan=keep-rows=1 --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=ONESTAGE
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=16 --rec-split-scan="keep-rows=1 out-phase=1" --rec-schedule 2>&1 | FileCheck %s --check-prefix=OUTPHASE
// RUN: rkc-opt %rkc_src/examples/specs/deltaproduct.mlir --rec-lower-chunked=chunk-size=16 --rec-split-scan --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=SINK
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128 products=bf16" | FileCheck %s --check-prefix=PREP
// RUN: rkc-opt %rkc_src/examples/specs/dplr.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=SHIFTED
// RUN: rkc-opt %rkc_src/examples/specs/dplr.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=SEVENROOTS
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan=keep-rows=1 --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=STAGEROWS
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128 prep-value-tile=32" | FileCheck %s --check-prefix=PREPTILE
// RUN: not rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="prep-value-tile=48" 2>&1 | FileCheck %s --check-prefix=PREPTILEBAD
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="prep-blocks=3" | FileCheck %s --check-prefix=PREPBLOCKS
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule | FileCheck %s --check-prefix=PREPBLOCKS0
// RUN: not rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="prep-blocks=5" 2>&1 | FileCheck %s --check-prefix=PREPBLOCKSBAD
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="elementwise-quads=0" | FileCheck %s --check-prefix=EQUADS
// RUN: not rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="elementwise-quads=2" 2>&1 | FileCheck %s --check-prefix=EQUADSBAD
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128 pair-grams=1" | FileCheck %s --check-prefix=PAIRED
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=UNPAIRED
// RUN: not rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="pair-grams=2" 2>&1 | FileCheck %s --check-prefix=PAIREDBAD
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="pad-addend-rows=1" | FileCheck %s --check-prefix=PADDED
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule | FileCheck %s --check-prefix=PADDED
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="pad-addend-rows=0" | FileCheck %s --check-prefix=DENSE
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-schedule="pad-addend-rows=1" | FileCheck %s --check-prefix=DENSE
// RUN: not rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="pad-addend-rows=2" 2>&1 | FileCheck %s --check-prefix=PADDEDBAD
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128 prep-blocks=3" | FileCheck %s --check-prefix=ORDER3
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128 threads=512" | FileCheck %s --check-prefix=ORDER3
// RUN: rkc-opt %rkc_src/examples/specs/kda.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128 max-shared-bytes=9223372036854775807" | FileCheck %s --check-prefix=ORDER3
// RUN: rkc-opt %rkc_src/examples/specs/gdn.mlir --rec-lower-chunked=chunk-size=32 --rec-split-scan --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=GDNORDER
// RUN: rkc-opt %rkc_src/examples/specs/eda.mlir --rec-lower-chunked=chunk-size=16 --rec-split-scan --rec-schedule="dk=128 dv=128" | FileCheck %s --check-prefix=EDAORDER

// An elementwise op takes the place of the operand it maps when it reads it
// last (each thread reads and writes back the same element): GDN-2's
// decayed read rows take the read rows' place; a decay whose rows are read
// again later (the query rows, by the output's Gram) gets a place of its
// own. Row vectors sit apart from the large tiles, and the prep at chunk 64
// fits.
// Where the scan stages what crosses (so that where a prep op stands matters
// to the prep kernel alone), prep ops move to just before their first
// reader, after gathering them ahead of the scan ops between them, where
// that lowers the prep's peak: DeltaProduct's β k (read by the last prep op
// only) no longer lives through the Grams. With the rest below, its prep
// (chunk 16) takes 41280 bytes, not 78400.
// SINK: rec.chunked chunk_size(16) {{.*}}prep_shared_bytes = 41280
// SINK: rec.chunk.gram
// SINK: rec.chunk.gram
// SINK: %[[BK:[0-9]+]] = rec.chunk.scale_rows %{{[0-9]+}}, %{{[0-9]+}} {rec.phase = "prep"
// SINK-NEXT: rec.chunk.decay_to_end %[[BK]],
// KDA's prep at chunk 32: the products only the scan reads are stored into
// the workspace (no place), the tiles are placed where they fit tightest,
// and the prep ops run depth first from what crosses to the scan, the
// query's chain (its rows, Gram and decay) before the erase Gram's, whose
// inverse lives on into the value loop: 53504 bytes (65536 in the chunk
// algorithm's order), so that four prep blocks fit an SM (228 KB). Its read
// rows are the erase rows: no exclusive cumsum.
// PREP: rec.chunked chunk_size(32) {{.*}}prep_shared_bytes = 53504 : i64, prep_value_tile = 128 : i64
// PREP-NOT: exclusive
// PREP: rec.chunk.gram {{.*}} mask(lower)
// PREP: rec.chunk.gram {{.*}} mask(strict)
// PREP: rec.chunk.matmul {{.*}}rec.to_scan = "all", rec.to_workspace
// DPLR's prep has seven roots, one more than are tried in every order:
// every choice and order of the first three (the rest as they stand) finds
// 74 368 bytes, three prep blocks an SM, where the other orders need
// 82 688, two.
// SEVENROOTS: rec.chunked chunk_size(32) {{.*}}prep_shared_bytes = 74368 : i64
// DPLR reads the state before the decay: its exclusive cumsum is the
// inclusive one's rows a row later (no place of its own, a zero row before
// the inclusive).
// SHIFTED: rec.chunk.cumsum %[[G:[0-9]+]] {{{.*}}rec.prep_smem_offset = [[#INCL:]] : i64{{.*}}rec.zero_row_before}
// SHIFTED-NEXT: rec.chunk.cumsum %[[G]] {exclusive, rec.phase = "prep", rec.prep_smem_offset = [[#INCL-128]] : i64, rec.shifted_view}
// The scan's staging buffer for 16-bit outputs: the value rows (read only
// by products, as their right operand) with rows 32 + 8 elements apart, so
// that ldmatrix meets no bank conflicts; U (a sum's addend) stays dense, 64
// bytes a row after them. Key-side tiles that products read as their left
// operand have rows 128 + 8 elements apart in both layouts.
// STAGEROWS: rec.chunk.decay_rows {{.*}}rec.stage_half_offset = 512 : i64, rec.stage_offset = 128 : i64, rec.stage_stride = 136 : i64
// STAGEROWS-NOT: rec.stage_half_stride
// STAGEROWS: rec.chunk.rows value {{{.*}}rec.stage_half_offset = 29184 : i64, rec.stage_half_stride = 40 : i64
// STAGEROWS: rec.chunk.matmul {{.*}}rec.stage_half_offset = 31744 : i64, rec.stage_offset = 15488 : i64, rec.to_scan = "all"
// STAGEROWS-SAME: -> !rec.tile<chunk, value>
// At chunk 64 and value tile 64 the scan cannot stage what crosses (no
// buffer fits beside its tiles), so the body keeps the chunk algorithm's
// order, which the scan's plan needs; the prep kernel keeps its own
// (rec.prep_order), whose plan needs 115 200 bytes, two blocks an SM, where
// the chunk algorithm's order needed 213 504. A decay of rows still takes
// their place.
// INPLACE: rec.chunked chunk_size(64) {{.*}}prep_shared_bytes = 115200
// INPLACE-NOT: rec.stage
// INPLACE: %[[READ:[0-9]+]] = rec.chunk.rows read_along {{{.*}}rec.prep_smem_offset = [[AT:[0-9]+]] : i64}
// INPLACE: rec.chunk.decay_rows %[[READ]], %{{[0-9]+}} {{{.*}}rec.prep_smem_offset = [[AT]] : i64}
// The query rows' chain runs first in the prep kernel, not in the body.
// INPLACE: %[[Q:[0-9]+]] = rec.chunk.rows query {rec.phase = "prep", rec.prep_order = 0 : i64
// INPLACE: rec.chunk.gram %[[Q]]
// At value tile 32 the kernel for 16-bit outputs has room for two staging
// buffers (their 16-bit layout) and the float32 kernel for one: the scan
// stages (stage_buffers = 1: the float32 kernel's count), so the body
// takes the prep's order and no op records one.
// ONESTAGE: rec.chunked chunk_size(64) {{.*}}prep_shared_bytes = 115200 : i64{{.*}}shared_bytes = 201216 : i64, stage_buffers = 1 : i64, stage_floats = 34944 : i64
// ONESTAGE-NOT: rec.prep_order

// The block's work and its shared memory: the state slice (64 rows of the
// 32-column value tile, 40 floats apart so that tensor-core fragment loads
// meet no bank conflicts) first, then every tile at an offset planned from
// live ranges, reused once dead (the strengths reuse the gate rows' space).
// CHECK: rec.chunked chunk_size(16) substeps_per_token(2) attributes {rec.schedule = {decode_blocks = 5 : i64, dk = 64 : i64, dv = 64 : i64, grid = "value tiles x value heads x sequences", prefetch = 0 : i64, scan_segments = 4 : i64, shared_bytes = {{[0-9]+}} : i64, state = "f32, shared memory", state_stride = 40 : i64, threads = 256 : i64, value_tile = 32 : i64}}
// CHECK: rec.chunk.rows gate {rec.smem_offset = 2560 : i64} : !rec.tile<chunk[0], key>
// CHECK: rec.chunk.rows write_strength {rec.smem_offset = 2560 : i64}
// A sum takes the place of its first addend when the sum is that addend's
// last reader (each thread reads an element and writes it back).
// CHECK: %[[WS:[0-9]+]] = rec.chunk.matmul %{{[0-9]+}}, %arg0 {rec.smem_offset = [[AT:[0-9]+]] : i64}
// CHECK: rec.chunk.add %[[WS]], %{{[0-9]+}} {rec.smem_offset = [[AT]] : i64}

// Decode keeps the state in registers: shared memory holds two buffers of
// partial sums (2 x 256 floats) and each sub-step's rows (KDA has one:
// 5 x 128 + 32) and its 2 scalars.
// DECODE: rec.decode tokens(1) attributes {rec.schedule = {decode_blocks = 5 : i64, dk = 128 : i64, dv = 128 : i64, {{.*}}shared_bytes = 4744 : i64, state = "f32, registers"

// TOOBIG: error: rec-schedule: the chunk body needs {{[0-9]+}} bytes of shared memory (chunk of 64 tokens, dk = 256, value tile 32); the limit is 232448: lower chunk-size or value-tile
// DK: error: rec-schedule: dk = 100 and dv = 128 must be multiples of 32 from 32 to 256
// TILE: error: rec-schedule: the value tile (48) must divide dv = 128
// THREADS: error: rec-schedule: threads (48) must be a multiple of 32 from 64 to 1024
// PREFETCH: error: rec-schedule: prefetch (2) must be 0 or 1
// PRODUCTS: error: rec-schedule: products must be tf32 or bf16, got 'fp8'

// The decode kernel's launch bound: by default as many blocks as 48
// registers a thread allow (5 of 256 threads); 0 leaves it to ptxas.
// BLOCKS: error: rec-schedule: decode-blocks (-3) must be -1, 0 or a number of blocks of 256 threads an SM holds (2048 threads)
// BLOCKS0: rec.decode tokens(1) attributes {rec.schedule = {decode_blocks = 0 : i64,

// Decode quads (a thread's rows consecutive, vectors loaded four rows at a
// time) by default where a token has two or more sub-steps: EDA's two, each
// sub-step's vectors padded to a multiple of four floats (5 x 128 + 32 + 2 =
// 674 -> 676; 2 x 256 + 2 x 676 = 1864 floats); without, 2 x 674. KDA's one
// sub-step takes them only when asked (1186 -> 1188 floats).
// QUADS: rec.decode tokens(1) attributes {rec.schedule = {decode_blocks = 5 : i64, decode_quads = 1 : i64, {{.*}}shared_bytes = 7456 : i64
// NOQUADS: rec.decode tokens(1) attributes {rec.schedule = {decode_blocks = 5 : i64, dk = 128 : i64, {{.*}}shared_bytes = 7440 : i64
// KDAQUADS: rec.decode tokens(1) attributes {rec.schedule = {decode_blocks = 5 : i64, decode_quads = 1 : i64, {{.*}}shared_bytes = 4752 : i64
// BADQUADS: error: rec-schedule: decode-quads (3) must be -1, 0 or 1
// The default (tf32) goes unnamed; bf16 is named for the emitter.
// BF16: rec.chunked {{.*}}rec.schedule = {{{.*}}products = "bf16"
// The out phase's kernel gets a plan of its own after the state slice
// (rec.out_smem_offset; the state's rows 40 floats apart at value tile 32):
// its ops, and what it receives where those ops stand (W and U₀, which it
// reads from the scan's workspace; the prep's rows and gate sums it
// redoes). What crosses to it of its own a chunk and value head is the
// entering state's 128 x 128 floats alone. The scan's plan holds none of
// the out ops.
// OUTPHASE: out_shared_bytes = {{[0-9]+}} : i64, out_workspace_floats = 16384 : i64
// OUTPHASE: rec.chunk.matmul {{.*}}rec.out_smem_offset = {{[0-9]+}} : i64, rec.phase = "prep", rec.prep_smem_offset = {{[0-9]+}} : i64, {{.*}}rec.to_out = "all", rec.to_scan = "all"
// OUTPHASE-NOT: rec.out_workspace_offset
// OUTPHASE: rec.chunk.rows query {rec.out_smem_offset = {{[0-9]+}} : i64, rec.phase = "out"}
// OUTPHASE-NOT: rec.phase = "out", rec.smem_offset
// THREADSTILE: error: rec-schedule: threads (64) must be a multiple of the value tile (128)

// The prep value tile where given: the value tile's own (no attribute).
// PREPTILE: rec.chunked chunk_size(32)
// PREPTILE-NOT: prep_value_tile
// PREPTILE-SAME: value_tile = 32 : i64
// PREPTILEBAD: error: rec-schedule: the prep value tile (48) must be 0 or a multiple of the value tile (32) dividing dv = 128

// The prep kernel's blocks an SM, at most: named in the schedule only when
// set (0, the default, is at most 4).
// PREPBLOCKS: rec.schedule = {{{.*}}prep_blocks = 3 : i64
// PREPBLOCKS0-NOT: prep_blocks
// PREPBLOCKSBAD: rec-schedule: prep-blocks (5) must be from 0 to 4

// Elementwise quads: named only when asked for (-1, the default, leaves it
// to the emitter: on where every gate is a scalar).
// EQUADS: rec.schedule = {{{.*}}elementwise_quads = 0 : i64
// PREPBLOCKS0-NOT: elementwise_quads
// EQUADSBAD: rec-schedule: elementwise-quads (2) must be -1, 0 or 1

// pair-grams=1: GDN's two Grams (the output's, of the query and key rows,
// and the erase Gram of the key rows) side by side in the prep, the query
// rows loaded before the first; the first marked to compute both. Without
// it, nothing is marked.
// PAIRED: pair_grams = 1
// PAIRED: %[[Q:.*]] = rec.chunk.rows query
// PAIRED: rec.chunk.gram %[[Q]], %[[K:[0-9]+]] {{.*}}{rec.gram_with_next, rec.phase = "prep"
// PAIRED-NEXT: rec.chunk.gram %[[K]], %[[K]] {{.*}}{rec.phase = "prep"
// PAIRED-NOT: rec.gram_with_next
// UNPAIRED-NOT: rec.gram_with_next
// PAIREDBAD: rec-schedule: pair-grams (2) must be -1, 0 or 1

// pad-addend-rows: the split scan's Q S (a product of S that only sums
// read, those sums read by sums and the output alone) and the sums of it
// get rows of 40 floats, not 32; W S, whose sum the state update and the
// output multiply, stays dense, as do the state update's products (their
// sum is the yield). On by default; off with 0, and without a split scan.
// PADDED: rec.chunk.matmul %{{[0-9]+}}, %arg0 {rec.phase = "scan", rec.smem_offset = {{[0-9]+}} : i64} : (!rec.tile<chunk, key>, !rec.tile<key, value>) -> !rec.tile<chunk, value>
// PADDED: [[QS:%[0-9]+]] = rec.chunk.matmul %{{[0-9]+}}, %arg0 {rec.phase = "scan", rec.smem_offset = [[AT:[0-9]+]] : i64, rec.smem_stride = 40 : i64}
// PADDED: rec.chunk.add [[QS]], %{{[0-9]+}} {rec.phase = "scan", rec.smem_offset = [[AT]] : i64, rec.smem_stride = 40 : i64}
// PADDED: rec.chunk.output
// PADDED: rec.chunk.matmul {{.*}}transpose_lhs
// PADDED-NOT: rec.smem_stride
// PADDED: rec.chunk.yield
// DENSE-NOT: rec.smem_stride
// PADDEDBAD: rec-schedule: pad-addend-rows (2) must be 0 or 1

// The depth-first order is taken only where it fits more prep blocks an SM
// than the launch bound allows otherwise: not with at most 3 blocks, nor at
// 512 threads (64 registers a thread leave 2), nor without a limit (the
// interpreter's); not for GDN, whose 45 KB already fit 4.
// ORDER3: rec.chunked chunk_size(32) {{.*}}prep_shared_bytes = 65536
// GDNORDER: rec.chunked chunk_size(32) {{.*}}prep_shared_bytes = 45312
// EDA's prep has seven roots: their 5040 orders are not searched (two
// seconds a compile), and its plan stays the gathered and sunk one.
// EDAORDER: rec.chunked chunk_size(16) {{.*}}prep_shared_bytes = 56640
