// `rkc tune` without a GPU: the plan of --dry-run (the schedule space, what
// shared memory rules out, what the database already has), the database
// round trip, and the errors. --gpu and --arch keep a dry run off the GPU.
//
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.none.jsonl --dry-run --gpu TestGPU --arch sm_90a | FileCheck %s --check-prefix=PLAN
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.none.jsonl --dry-run --gpu TestGPU --arch sm_90a --budget 3 | FileCheck %s --check-prefix=BUDGET
// KDA's delta factor has products that share a left operand: factored
// products are a knob there (EDA's plan above searches 0 only).
// RUN: rkc tune %rkc_src/examples/specs/kda.mlir --shape B=1,T=8192,H=32 --db %t.none.jsonl --dry-run --gpu TestGPU --arch sm_90a | FileCheck %s --check-prefix=FACTOR
// KDA's prep at chunk 32 fits four blocks an SM: at most 3 is other kernels
// (the launch bound, and the prep's former order), measured.
// RUN: rkc tune %rkc_src/examples/specs/kda.mlir --shape B=1,T=8192,H=32 --db %t.none.jsonl --dry-run --gpu TestGPU --arch sm_90a | FileCheck %s --check-prefix=KDABLOCKS
//
// A database written by hand, keyed as this rkc keys its rows (spec hash,
// version and default chunk size taken from the plan):
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.none.jsonl --dry-run --gpu TestGPU --arch sm_90a | sed -n -e 's/^  key .*spec_hash=\([0-9a-f]*\) .*rkc_version=\([^ ]*\) .*/s|@HASH@|\1|g;s|@VERSION@|\2|g/p' -e 's/^  default   chunk \([0-9]*\),.*/s|@CHUNK@|\1|g/p' > %t.sed
// RUN: sed -f %t.sed %S/Inputs/tuning.jsonl.in > %t.jsonl
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --shape B=4,T=2048,H=16 --shape B=1,T=5000,H=32 --db %t.jsonl --dry-run --gpu TestGPU --arch sm_90a > %t.resume 2>&1
// RUN: FileCheck %s --check-prefix=RESUME < %t.resume
// RUN: FileCheck %s --check-prefix=WINNERS < %t.resume
// RUN: FileCheck %s --check-prefix=SAMEBUCKET < %t.resume
// Rows of another GPU are another configuration:
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.jsonl --dry-run --gpu OtherGPU --arch sm_90a | FileCheck %s --check-prefix=OTHERGPU
// A database written before the split-scan knob: a schedule without the key
// reads as split-scan 0, what it was measured with (the default is now 1),
// so its rows still count.
// RUN: sed -e 's/,"split_scan":0//' %t.jsonl > %t.legacy.jsonl
// RUN: not grep '"split_scan":0' %t.legacy.jsonl
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --shape B=4,T=2048,H=16 --shape B=1,T=5000,H=32 --db %t.legacy.jsonl --dry-run --gpu TestGPU --arch sm_90a > %t.legacy 2>&1
// RUN: FileCheck %s --check-prefix=RESUME < %t.legacy
// RUN: FileCheck %s --check-prefix=WINNERS < %t.legacy
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.legacy.jsonl --dry-run --gpu OtherGPU --arch sm_90a | FileCheck %s --check-prefix=OTHERGPU
// And before the prefetch knob as well: both keys read as 0.
// RUN: sed -e 's/,"prefetch":0//' %t.legacy.jsonl > %t.older.jsonl
// RUN: not grep '"prefetch":0' %t.older.jsonl
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --shape B=4,T=2048,H=16 --shape B=1,T=5000,H=32 --db %t.older.jsonl --dry-run --gpu TestGPU --arch sm_90a > %t.older 2>&1
// RUN: FileCheck %s --check-prefix=RESUME < %t.older
// RUN: FileCheck %s --check-prefix=WINNERS < %t.older
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.older.jsonl --dry-run --gpu OtherGPU --arch sm_90a | FileCheck %s --check-prefix=OTHERGPU
//
// RUN: not rkc tune %s --shape B=1,X=2 --db %t.jsonl --dry-run --gpu G --arch sm_90a 2>&1 | FileCheck %s --check-prefix=BADKEY
// RUN: not rkc tune %s --shape B=1,T=64 --db %t.jsonl --dry-run --gpu G --arch sm_90a 2>&1 | FileCheck %s --check-prefix=NOHEADS
// RUN: not rkc tune %s --shape T=64,H=4,HV=6 --db %t.jsonl --dry-run --gpu G --arch sm_90a 2>&1 | FileCheck %s --check-prefix=GVA
// RUN: not rkc tune %s --shape T=0,H=4 --db %t.jsonl --dry-run --gpu G --arch sm_90a 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not rkc tune %s --db %t.jsonl --dry-run 2>&1 | FileCheck %s --check-prefix=NOSHAPE
// RUN: not rkc tune %s --shape T=64,H=2 --dry-run 2>&1 | FileCheck %s --check-prefix=NODB
// RUN: not rkc tune %s --shape T=64,H=2 --db %S/Inputs/bad-tuning.jsonl --dry-run --gpu G --arch sm_90a 2>&1 | FileCheck %s --check-prefix=BADDB
// RUN: not rkc tune %s --shape T=64,H=2 --db %S/Inputs/missing-field.jsonl --dry-run --gpu G --arch sm_90a 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: env CUDA_VISIBLE_DEVICES= not rkc tune %s --shape T=64,H=2 --db %t.nogpu.jsonl 2>&1 | FileCheck %s --check-prefix=NOGPU
// Without a GPU but with --gpu and --arch, a run plans like a dry run; with
// schedules left to measure it stops there, and where the database has
// them all it writes the winners table (no GPU, no nvcc):
// RUN: env CUDA_VISIBLE_DEVICES= not rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.jsonl --gpu TestGPU --arch sm_90a 2>&1 | FileCheck %s --check-prefix=LEFT
// RUN: rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.none.jsonl --dry-run --gpu TestGPU --arch sm_90a | sed -n -f %S/Inputs/plan-to-rows.sed | sed -f %t.sed > %t.full.jsonl
// RUN: env CUDA_VISIBLE_DEVICES= rkc tune %rkc_src/examples/specs/eda.mlir --shape B=1,T=8192,H=32 --db %t.full.jsonl --gpu TestGPU --arch sm_90a --winners %t.full.md 2>&1 | FileCheck %s --check-prefix=OFFLINE
// RUN: FileCheck %s --check-prefix=OFFLINEMD < %t.full.md
// RUN: not ls %t.nogpu.jsonl
// RUN: rkc tune --help | FileCheck %s --check-prefix=HELP
// RUN: rkc --help | FileCheck %s --check-prefix=TOPHELP
// RUN: rkc --version | FileCheck %s --check-prefix=VERSION

// PLAN: rkc tune: @eda from {{.*}}eda.mlir (dry run)
// PLAN-NEXT: key       spec_hash={{[0-9a-f]+}} dk=128 dv=128 dtype=bf16 arch=sm_90a rkc_version={{[^ ]+}} gpu="TestGPU"
// PLAN-NEXT: shape     B=1,T=8192,H=32,HV=32 (bucket bh=32,t=8192)
// PLAN-NEXT: space     chunk-size {64, 32, 16, 8} x value-tile {16, 32, 64, 128} x threads {128, 256, 512} x prefetch {0, 1} x split-scan {0, 1} x factor-products {0, 1} x prep-blocks {0, 3}: 384 schedules valid for dv = 128, factor-products 0 only (1 compiles the same kernels for this spec)
// The default is the split kernels (a prep kernel, then the scan kernel).
// PLAN-NEXT: default   chunk [[CHUNK:[0-9]+]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0
// PLAN-NEXT: [ 1/384] chunk [[CHUNK]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0 (default): measure
// The default's neighbours come next, one knob changed; the default as one
// kernel lowers and is measured.
// PLAN-NEXT: [ 2/384] chunk 64, value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0: pruned: rec-schedule: the chunk body needs {{[0-9]+}} bytes of shared memory (chunk of 64 tokens, dk = 128, value tile 32); the limit is {{[0-9]+}}
// PLAN: [{{ [3-9]|1[0-2]}}/384] chunk [[CHUNK]], value-tile 32, threads 256, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: measure{{$}}
// EDA's prep (chunk 16) fits 4 blocks an SM: at most 3 is other kernels,
// measured.
// PLAN-NEXT: [{{ [3-9]|1[0-2]}}/384] chunk [[CHUNK]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 3: measure{{$}}
// PLAN-NEXT: [{{ [3-9]|1[0-2]}}/384] chunk [[CHUNK]], value-tile 32, threads 256, prefetch 1, split-scan 1, factor-products 0, prep-blocks 0: measure{{$}}
// PLAN: chunk 64, value-tile 32, threads 256, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: pruned: rec-schedule: the chunk body needs {{[0-9]+}} bytes of shared memory (chunk of 64 tokens, dk = 128, value tile 32); the limit is {{[0-9]+}}
// PLAN: chunk 64, value-tile 128, threads 256, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: pruned: rec-schedule: the chunk body needs {{[0-9]+}} bytes of shared memory (chunk of 64 tokens, dk = 128, value tile 128); the limit is {{[0-9]+}}
// PLAN: [384/384]
// PLAN-NEXT: plan      {{[0-9]+}} to compile and measure, {{[0-9]+}} pruned (by the lowering, or the same kernels as another), 0 in the database

// FACTOR: x factor-products {0, 1} x prep-blocks {0, 3}: 768 schedules valid for dv = 128{{$}}
// FACTOR-NEXT: default   chunk [[KCHUNK:[0-9]+]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0
// FACTOR: chunk [[KCHUNK]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 1, prep-blocks 0: measure{{$}}
// FACTOR: plan      {{[0-9]+}} to compile and measure

// KDABLOCKS: default   chunk 32, value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0
// KDABLOCKS: chunk 32, value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 3: measure{{$}}

// BUDGET: (default): measure
// BUDGET: not measured (--budget 3)
// BUDGET: plan      3 to compile and measure, {{[0-9]+}} pruned (by the lowering, or the same kernels as another), 0 in the database, {{[0-9]+}} over --budget

// RESUME: shape     B=1,T=8192,H=32,HV=32 (bucket bh=32,t=8192)
// RESUME-NEXT: shape     B=4,T=2048,H=16,HV=16 (bucket bh=64,t=2048)
// RESUME-NOT: shape
// RESUME: default   chunk [[CHUNK:[0-9]+]], value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0
// RESUME-NEXT: (default): skip (in the database; bh=32,t=8192: ok 52.100 ms; bh=64,t=2048: ok 12.500 ms)
// RESUME-DAG: chunk 8, value-tile 64, threads 128, prefetch 1, split-scan 1, factor-products 0, prep-blocks 0: measure at bh=64,t=2048; the database has the other buckets
// RESUME-DAG: chunk 8, value-tile 32, threads 256, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: measure at bh=32,t=8192; the database has the other buckets
// RESUME-DAG: chunk 8, value-tile 16, threads 128, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: measure at bh=64,t=2048; the database has the other buckets
// A row's prefetch and split-scan are part of its schedule: the other values
// are measured.
// RESUME-DAG: chunk 8, value-tile 64, threads 128, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: measure{{$}}
// RESUME-DAG: chunk 8, value-tile 64, threads 128, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0: measure{{$}}
// RESUME-DAG: chunk 8, value-tile 64, threads 128, prefetch 1, split-scan 0, factor-products 0, prep-blocks 0: measure{{$}}
// RESUME-DAG: chunk [[CHUNK]], value-tile 32, threads 256, prefetch 1, split-scan 1, factor-products 0, prep-blocks 0: measure{{$}}
// RESUME-DAG: chunk [[CHUNK]], value-tile 32, threads 256, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: measure{{$}}
// Another GPU's row does not count, nor one measured on other code.
// RESUME-DAG: chunk 8, value-tile 32, threads 512, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: measure{{$}}
// RESUME-DAG: chunk 8, value-tile 16, threads 256, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: measure{{$}}
// RESUME: plan      {{[0-9]+}} to compile and measure, {{[0-9]+}} pruned (by the lowering, or the same kernels as another), 1 in the database
// SAMEBUCKET: note: --shape B=1,T=5000,H=32 falls in bucket bh=32,t=8192 with an earlier shape: skipped

// WINNERS: # Tuning winners
// WINNERS: ## @eda, spec {{[0-9a-f]+}}, dk 128, dv 128, bf16, TestGPU (sm_90a), rkc
// WINNERS: | bucket | shape | default | default ms | winner | winner ms (p20-p80) | speed-up | ok / failed / pruned |
// WINNERS: | bh=32,t=8192 | B=1,T=8192,H=32,HV=32 | chunk {{[0-9]+}}, value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0 | 52.100 | chunk 8, value-tile 64, threads 128, prefetch 1, split-scan 1, factor-products 0, prep-blocks 0 | 40.000 (39.900-40.200) | 1.30x | 3 / 1 / 0 |
// WINNERS: | bh=64,t=2048 | B=4,T=2048,H=16,HV=16 | chunk {{[0-9]+}}, value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0 | 12.500 | chunk {{[0-9]+}}, value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0 (the default) | 12.500 (12.500-12.500) | 1.00x | 2 / 0 / 0 |

// OTHERGPU: chunk 8, value-tile 32, threads 512, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0: skip (in the database: ok 30.000 ms)
// OTHERGPU: plan      {{.*}}, 1 in the database
// OTHERGPU: ## @eda, {{.*}}, OtherGPU (sm_90a)
// OTHERGPU: | bh=32,t=8192 | B=1,T=8192,H=32,HV=32 | - | - | chunk 8, value-tile 32, threads 512, prefetch 0, split-scan 0, factor-products 0, prep-blocks 0 | 30.000 (30.000-30.000) | - | 1 / 0 / 0 |

// BADKEY: rkc tune: error: --shape 'B=1,X=2': unknown key 'X' (expected B, T, H, HV)
// NOHEADS: rkc tune: error: --shape 'B=1,T=64': T and H are required, e.g. B=1,T=8192,H=32
// GVA: rkc tune: error: --shape 'T=64,H=4,HV=6': HV = 6 is not a multiple of H = 4
// ZERO: rkc tune: error: --shape 'T=0,H=4': 'T' must be a positive integer, got '0'
// NOSHAPE: rkc tune: error: give at least one --shape, e.g. --shape B=1,T=8192,H=32
// NODB: rkc tune: error: --db is required
// BADDB: rkc tune: error: {{.*}}bad-tuning.jsonl:3: not JSON:
// MISSING: rkc tune: error: {{.*}}missing-field.jsonl:2: missing "bucket"
// NOGPU: rkc tune: error: no CUDA driver/GPU: {{.*}}(with --gpu and --arch, a database that has every schedule needs none)

// LEFT: plan      {{[0-9]+}} to compile and measure, {{[0-9]+}} pruned (by the lowering, or the same kernels as another), 3 in the database
// LEFT-NEXT: rkc tune: error: no CUDA driver/GPU: {{.*}}; {{[0-9]+}} schedules left to measure

// OFFLINE: plan      0 to compile and measure, 0 pruned (by the lowering, or the same kernels as another), 384 in the database
// (The table on stdout, the last line on stderr: in either order.)
// OFFLINE-DAG: | bh=32,t=8192 | B=1,T=8192,H=32,HV=32 | chunk {{[0-9]+}}, value-tile 32, threads 256, prefetch 0, split-scan 1, factor-products 0, prep-blocks 0 | 256.{{[0-9]+}} | chunk {{[0-9]+}}, value-tile {{[0-9]+}}, threads 128, {{.*}} | 128.{{[0-9]+}} ({{.*}}) | 2.00x | 136 / 0 / 248 |
// OFFLINE-DAG: rkc tune: nothing to measure in {{.*}}full.jsonl; wrote {{.*}}full.md
// OFFLINEMD: Written by `rkc tune` from `{{.*}}full.jsonl`.
// OFFLINEMD: TestGPU (sm_90a)

// HELP: rkc tune [options] <spec.mlir>
// HELP: --budget=<N>
// HELP: --db=<tuning.jsonl>
// HELP: --dry-run
// HELP: --jobs=<uint>
// HELP: --shape=<B=1,T=8192,H=32[,HV=32]>
// TOPHELP: rkc tune SPEC --shape B=1,T=8192,H=32 [--shape ...] --db DB [--jobs N] [--budget N]
// TOPHELP: tune - Measure a spec's schedules on the GPU and record the fastest per shape bucket
// VERSION: rkc {{[0-9]+\.[0-9]+\.[0-9]+}}

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
