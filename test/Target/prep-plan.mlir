// The prep kernel's shared-memory plan (rec-schedule) holds no two live tiles
// in the same floats but where an elementwise op writes over the operand it
// reads last, and no op reads a product stored straight into the workspace:
// Inputs/check_prep_plan.py replays the plan from the op comments of the
// generated prep kernel, for every example spec at the default schedule and
// at a few others (dk 64, chunk 16, value tile 16, 128 threads; chunk 64 at
// value tile 64, whose scan is unstaged: the prep kernel then written in its
// own order, rec.prep_order).
// RUN: rm -rf %t && mkdir -p %t
// RUN: for s in comba deltanet deltaproduct dplr eda gdn gdn2 kda kda_prologue linear_attention qed; do rkc compile %rkc_src/examples/specs/$s.mlir -o %t/$s --no-fatbin > /dev/null || exit 1; done
// RUN: rkc compile %rkc_src/examples/specs/kda.mlir -o %t/kda64 --no-fatbin --dk 64 --dv 64 --chunk-size 16 > /dev/null
// RUN: rkc compile %rkc_src/examples/specs/eda.mlir -o %t/eda16 --no-fatbin --value-tile 16 --threads 128 > /dev/null
// RUN: rkc compile %rkc_src/examples/specs/gdn.mlir -o %t/gdn64 --no-fatbin --chunk-size 64 > /dev/null
// RUN: rkc compile %rkc_src/examples/specs/gdn2.mlir -o %t/gdn2vt64 --no-fatbin --chunk-size 64 --value-tile 64 > /dev/null
// RUN: grep -q "rec.prep_order" %t/gdn2vt64/gdn2.cu
// RUN: python3 %rkc_src/test/tools/Inputs/check_prep_plan.py %t/*/*.cu | FileCheck %s
// CHECK-COUNT-15: .cu OK
// CHECK-NOT: FAULTS

// The checker itself finds a fault: KDA's query rows moved onto its erase
// rows, which the output's Gram still reads.
// RUN: mkdir -p %t/bad && cp %t/kda/kda_launch.c %t/bad/kda_launch.c
// RUN: sed -E 's/(rec.chunk.rows query \{[^}]*rec.prep_smem_offset = )[0-9]+/\1QUERY/' %t/kda/kda.cu > %t/bad/q.cu
// RUN: sed -E "s/QUERY/$(grep -oE 'rec.chunk.rows erase_along \{[^}]*rec.prep_smem_offset = [0-9]+' %t/kda/kda.cu | head -1 | grep -oE '[0-9]+$')/" %t/bad/q.cu > %t/bad/kda.cu
// RUN: not python3 %rkc_src/test/tools/Inputs/check_prep_plan.py %t/bad/kda.cu | FileCheck %s --check-prefix=BAD
// BAD: kda.cu FAULTS
// BAD-NEXT: overlaps
