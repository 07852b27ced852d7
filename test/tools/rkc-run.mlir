// `rkc run` on this spec, with random inputs, and its errors.
// RUN: rkc run %s --random B=1,T=5,H=2,dk=4,dv=3 --seed 3 | FileCheck %s
// RUN: rkc run %s --random B=1,T=5,H=2,HV=4,dk=4,dv=3 | FileCheck %s --check-prefix=GVA
// RUN: rkc run %s --random seqlens=3:1:4,H=1,dk=4,dv=3 | FileCheck %s --check-prefix=VARLEN
// RUN: not rkc run %s --random B=1,T=5,X=3 2>&1 | FileCheck %s --check-prefix=BADSHAPE
// RUN: rkc run %s --random B=1,T=5,H=2,dk=4,dv=3,gates=40 --save-inputs %t.strong.safetensors | FileCheck %s --check-prefix=GATES
// RUN: not rkc run %s --random B=1,T=5,gates=0 2>&1 | FileCheck %s --check-prefix=BADGATES
// RUN: not rkc run %s --inputs %t.missing.safetensors 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not rkc run %s --random B=1 --out-dtype i64 2>&1 | FileCheck %s --check-prefix=OUTDTYPE
// RUN: not rkc run %s --random B=1 --backend decode --split-scan 2>&1 | FileCheck %s --check-prefix=SPLITSCAN
// RUN: not rkc run %s --random B=1 --backend chunked --half-workspace 2>&1 | FileCheck %s --check-prefix=HALF
// RUN: not rkc run %s --random B=1 --backend chunked --segments 0 2>&1 | FileCheck %s --check-prefix=SEGMENTS
// RUN: not rkc run %s --random B=1 --bf16-products 2>&1 | FileCheck %s --check-prefix=BF16PRODUCTS
// RUN: not rkc run %s --random B=1 --backend chunked --out-phase 2>&1 | FileCheck %s --check-prefix=OUTPHASE
// RUN: rkc run %s --random B=1,T=5,H=2,dk=4,dv=3 --backend chunked --chunk-size 2 --bf16-products | FileCheck %s --check-prefix=BF16OK
// RUN: not rkc bench %s 2>&1 | FileCheck %s --check-prefix=BENCH
// RUN: rkc --help | FileCheck %s --check-prefix=HELP

// CHECK: rkc run: @gated_delta from {{.*}}rkc-run.mlir
// CHECK: problem  B=1 T=5 H=2 HV=2 dk=4 dv=3 sequences=1 scale=0.5
// CHECK: backend  interp (float64)
// CHECK: output   final_state [1, 2, 4, 3]
// CHECK: output   o [1, 5, 2, 3]
// GVA: problem  B=1 T=5 H=2 HV=4
// GVA: output   o [1, 5, 4, 3]
// VARLEN: cu_seqlens I64 [4]
// VARLEN: problem  B=1 T=8 H=1 HV=1 dk=4 dv=3 sequences=3
// VARLEN: output   final_state [3, 1, 4, 3]
// BADSHAPE: error: --random: unknown shape key 'X' (expected B, T, H, HV, dk, dv, gates or seqlens)
// GATES: problem  B=1 T=5 H=2 HV=2 dk=4 dv=3 sequences=1
// BADGATES: error: --random: 'gates' must be a positive integer, got '0'
// NOFILE: error: {{.*}}missing.safetensors{{.*}}
// OUTDTYPE: error: --out-dtype must be f64, f32, bf16 or f16, got 'i64'
// SPLITSCAN: error: --split-scan shapes the chunked backend; it has no meaning with --backend decode
// HALF: error: a 16-bit workspace needs the chunked backend's split form
// SEGMENTS: error: segments must be a positive count, and more than one only with the chunked backend; got 0
// BF16PRODUCTS: error: --bf16-products shapes the chunked backend; it has no meaning with --backend interp
// OUTPHASE: error: an out phase needs the chunked backend's split form, in one segment
// BF16OK: backend  chunked (chunk 2 tokens) (float64) with bf16 product operands
// BF16OK: output   o [1, 5, 2, 3]
// BENCH: rkc bench: not available in this version
// HELP: SUBCOMMANDS:
// HELP: run - Run a recurrence spec on the CPU (float64)

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
