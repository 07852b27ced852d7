// `rkc compile --tuning`: the default schedule and each bucket's winner as
// variants, and a launcher that picks one by the call's shape bucket. The
// database is written by hand, keyed as this rkc keys its rows (spec hash,
// version and default chunk size taken from `rkc tune --dry-run`).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t/none.jsonl --dry-run --gpu TestGPU --arch sm_90a | sed -n -e 's/^  key .*spec_hash=\([0-9a-f]*\) .*rkc_version=\([^ ]*\) .*/s|@HASH@|\1|g;s|@VERSION@|\2|g/p' -e 's/^  default   chunk \([0-9]*\),.*/s|@CHUNK@|\1|g/p' > %t/db.sed
// RUN: sed -f %t/db.sed %S/Inputs/tuning.jsonl.in > %t/tuning.jsonl
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t/out --tuning %t/tuning.jsonl --no-fatbin > %t/log 2>&1
// RUN: FileCheck %s --check-prefix=LOG < %t/log
// RUN: FileCheck %s --check-prefix=LAUNCH < %t/out/eda_launch.c
// RUN: ls %t/out | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=HEADER < %t/out/eda.h
// The winner and the default both have split kernels (split-scan 1: a prep
// kernel, then the scan).
// RUN: FileCheck %s --check-prefix=SPLIT < %t/out/eda__c8_v64_t128_p1_s1_f0_b0.cu
// RUN: grep -q rkc_stream_alloc %t/out/eda__c8_v64_t128_p1_s1_f0_b0_launch.inc
// RUN: cat %t/out/eda__c*_v32_t256_p0_s1_f0_b0.cu %t/out/eda__c*_v32_t256_p0_s1_f0_b0_launch.inc > %t/default-variant
// RUN: grep -q _prefill_kernel %t/default-variant
// RUN: grep -q _prep_kernel %t/default-variant
// RUN: grep -q rkc_stream_alloc %t/default-variant
//
// The bucket whose winner is the default alone: no dispatch.
// RUN: grep bh=64 %t/tuning.jsonl > %t/default-wins.jsonl
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t/default --tuning %t/default-wins.jsonl --no-fatbin 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: ls %t/default | FileCheck %s --check-prefix=PLAIN
// Another spec, or another dk: no rows, a plain compile.
// RUN: rkc compile %s -o %t/other --tuning %t/tuning.jsonl --no-fatbin 2>&1 | FileCheck %s --check-prefix=NOROWS
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t/dk64 --dk 64 --dv 64 --tuning %t/tuning.jsonl --no-fatbin 2>&1 | FileCheck %s --check-prefix=NOROWS64
// A winner measured on other code than this rkc generates: a note.
// RUN: sed -e 's/"schedule":{"chunk_size":8,"value_tile":64/"code_hash":"0000000000000000","schedule":{"chunk_size":8,"value_tile":64/' %t/tuning.jsonl > %t/stale.jsonl
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t/stale --tuning %t/stale.jsonl --no-fatbin 2>&1 | FileCheck %s --check-prefix=STALE
// A database written before the split-scan knob: a schedule without the key
// reads as split-scan 0, what it was measured with (here only rows that are
// neither the default nor a winner had 0), so the same variants and dispatch.
// RUN: mkdir %t/legacy && sed -e 's/,"split_scan":0//' %t/tuning.jsonl > %t/legacy/tuning.jsonl
// RUN: not grep '"split_scan":0' %t/legacy/tuning.jsonl
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t/legacy/out --tuning %t/legacy/tuning.jsonl --no-fatbin > %t/legacy/log 2>&1
// RUN: FileCheck %s --check-prefix=LOG < %t/legacy/log
// RUN: FileCheck %s --check-prefix=LAUNCH < %t/legacy/out/eda_launch.c
// And before the prefetch knob as well: both keys read as 0.
// RUN: mkdir %t/older && sed -e 's/,"prefetch":0//' %t/legacy/tuning.jsonl > %t/older/tuning.jsonl
// RUN: not grep '"prefetch":0' %t/older/tuning.jsonl
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t/older/out --tuning %t/older/tuning.jsonl --no-fatbin > %t/older/log 2>&1
// RUN: FileCheck %s --check-prefix=LOG < %t/older/log
// RUN: FileCheck %s --check-prefix=LAUNCH < %t/older/out/eda_launch.c
// Rows that only failed.
// RUN: grep failed %t/tuning.jsonl > %t/failed.jsonl
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t/failed --tuning %t/failed.jsonl --no-fatbin 2>&1 | FileCheck %s --check-prefix=FAILED
//
// RUN: not rkc compile %s -o %t/bad --tuning %S/Inputs/bad-tuning.jsonl --no-fatbin 2>&1 | FileCheck %s --check-prefix=BADDB
// RUN: not rkc compile %s -o %t/bad --tuning %t/missing.jsonl --no-fatbin 2>&1 | FileCheck %s --check-prefix=NODB
// RUN: rkc compile --help | FileCheck %s --check-prefix=HELP

// LOG: rkc compile: note: {{.*}}tuning.jsonl holds rows of several GPUs (OtherGPU, TestGPU): using those of TestGPU, the newest
// LOG-NOT: re-run rkc tune
// LOG: rkc compile: @eda -> {{.*}}out, tuned by {{.*}}tuning.jsonl (TestGPU, rkc {{.*}}, 2 buckets)
// LOG-NEXT: variant   eda__c[[CHUNK:[0-9]+]]_v32_t256_p0_s1_f0_b0: chunk [[CHUNK]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0 (the default)
// LOG-NEXT: variant   eda__c8_v64_t128_p1_s1_f0_b0: chunk 8, value-tile 64, threads 128, prefetch 1, split-scan 1, factor-products 0, prep-blocks 0
// LOG-NEXT: dispatch  bh=32,t=8192 -> eda__c8_v64_t128_p1_s1_f0_b0 (40.000 ms, default 52.100 ms)
// LOG-NEXT: dispatch  bh=64,t=2048 -> eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0 (12.500 ms)
// LOG-NEXT: dispatch  any other bucket -> eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0
// LOG: wrote     eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0.h, eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0.cu, eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0_launch.inc
// LOG-NEXT: wrote     eda__c8_v64_t128_p1_s1_f0_b0.h, eda__c8_v64_t128_p1_s1_f0_b0.cu, eda__c8_v64_t128_p1_s1_f0_b0_launch.inc
// LOG-NEXT: wrote     eda.h, eda.json, eda_launch.c, rkc/runtime.h, rkc/runtime.c, rkc/tile.cuh

// LAUNCH: /* Generated by rkc from @eda, tuned with tuning.jsonl: host launchers
// LAUNCH: bh=32,t=8192         eda__c8_v64_t128_p1_s1_f0_b0 (chunk 8, value-tile 64, threads 128, prefetch 1, split-scan 1, factor-products 0, prep-blocks 0; 40.000 ms, default 52.100 ms)
// LAUNCH: bh=64,t=2048         eda__c[[CHUNK:[0-9]+]]_v32_t256_p0_s1_f0_b0 (chunk [[CHUNK]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0; 12.500 ms)
// LAUNCH: any other bucket     eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0 (the default: chunk [[CHUNK]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0)
// LAUNCH: #include "eda.h"
// LAUNCH: #include "eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0_launch.inc"
// LAUNCH-NEXT: #include "eda__c8_v64_t128_p1_s1_f0_b0_launch.inc"
// LAUNCH: _STATIC_ASSERT(sizeof(rkc_eda__c8_v64_t128_p1_s1_f0_b0_args) == sizeof(rkc_eda_args)
// LAUNCH: static int rkc_eda_variant(const rkc_eda_args *a) {
// LAUNCH: const int64_t B = a->q.shape[0];
// LAUNCH-NEXT: const int64_t T = a->q.shape[1];
// LAUNCH: HV = a->gamma.shape[2];
// LAUNCH-NEXT: const int64_t N = a->cu_seqlens ? a->num_seqs : B;
// LAUNCH: const int64_t bh = rkc_eda_pow2(N * HV);
// LAUNCH-NEXT: const int64_t t = rkc_eda_pow2(a->cu_seqlens ? (T + N - 1) / N : T);
// LAUNCH-NEXT: if (bh == 32 && t == 8192)
// LAUNCH-NEXT: return 1; /* eda__c8_v64_t128_p1_s1_f0_b0 */
// LAUNCH-NEXT: return -1;
// LAUNCH: rkc_status rkc_eda_fwd(CUstream stream, const rkc_eda_args *args) {
// LAUNCH-NEXT: switch (rkc_eda_variant(args)) {
// LAUNCH-NEXT: case 1:
// LAUNCH-NEXT: return rkc_eda__c8_v64_t128_p1_s1_f0_b0_run_fwd(stream, args);
// LAUNCH-NEXT: default:
// LAUNCH-NEXT: return rkc_eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0_run_fwd(stream, args);
// LAUNCH: rkc_status rkc_eda_decode(CUstream stream, const rkc_eda_args *args) {
// LAUNCH-NEXT: return rkc_eda__c[[CHUNK]]_v32_t256_p0_s1_f0_b0_run_decode(stream, args);

// FILES-DAG: {{^}}eda.h{{$}}
// FILES-DAG: {{^}}eda.json{{$}}
// FILES-DAG: {{^}}eda_launch.c{{$}}
// FILES-DAG: {{^}}eda__c8_v64_t128_p1_s1_f0_b0.h{{$}}
// FILES-DAG: {{^}}eda__c8_v64_t128_p1_s1_f0_b0.cu{{$}}
// FILES-DAG: {{^}}eda__c8_v64_t128_p1_s1_f0_b0_launch.inc{{$}}
// FILES-DAG: {{^}}eda__c{{[0-9]+}}_v32_t256_p0_s1_f0_b0_launch.inc{{$}}
// FILES-DAG: {{^}}rkc{{$}}

// The public header is the one a plain compile writes.
// HEADER: typedef struct rkc_eda_args {
// HEADER: rkc_status rkc_eda_fwd(CUstream stream, const rkc_eda_args *args);
// HEADER: rkc_status rkc_eda_decode(CUstream stream, const rkc_eda_args *args);

// SPLIT: rkc_eda__c8_v64_t128_p1_s1_f0_b0_prefill_kernel_tc(const Params p)
// SPLIT: __device__ __forceinline__ void prep(const Params &p) {
// SPLIT: rkc_eda__c8_v64_t128_p1_s1_f0_b0_prep_kernel_tc(const Params p)

// DEFAULT: rkc compile: note: the default schedule is the fastest in every bucket {{.*}}default-wins.jsonl tuned for @eda: compiling it alone
// DEFAULT: rkc compile: @eda -> {{.*}}default
// PLAIN-NOT: eda__
// PLAIN: eda.cu

// NOROWS: rkc compile: note: {{.*}}tuning.jsonl has no rows for @gated_delta (spec {{[0-9a-f]+}}, dk 128, dv 128, sm_90a, bf16): compiling the default schedule only
// NOROWS: rkc compile: @gated_delta -> {{.*}}other
// NOROWS64: rkc compile: note: {{.*}}tuning.jsonl has no rows for @eda (spec {{[0-9a-f]+}}, dk 64, dv 64, sm_90a, bf16)
// STALE: rkc compile: note: eda__c8_v64_t128_p1_s1_f0_b0 was measured on code that this rkc generates differently: re-run rkc tune to measure it again
// STALE: dispatch  bh=32,t=8192 -> eda__c8_v64_t128_p1_s1_f0_b0
// FAILED: rkc compile: note: {{.*}}failed.jsonl has no schedule of @eda that passed its check: compiling the default schedule only

// BADDB: rkc compile: error: {{.*}}bad-tuning.jsonl:3: not JSON:
// NODB: rkc compile: error: {{.*}}missing.jsonl: no such file
// Every knob of `rkc tune` is an option of `rkc compile`.
// HELP: --chunk-size=<long>
// HELP: --prefetch=<long>
// HELP: --split-scan=<long>
// HELP: --threads=<long>
// HELP: --tuning=<tuning.jsonl>
// HELP: --value-tile=<long>

rec.recurrence @gated_delta {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.scalar
  %beta = rec.input "beta" : !rec.scalar
  rec.step {
    rec.decay %g : !rec.scalar
    rec.delta %k, %v scale %beta : !rec.key, !rec.value, !rec.scalar
    rec.read %q : !rec.key
  }
}
