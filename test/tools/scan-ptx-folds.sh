#!/usr/bin/env bash
# The alignment tests of the tile library fold in a generated scan: GDN's
# tensor-core scan kernel, as PTX, stores the float32 pairs of its products
# as one st.shared.v2.f32 each, and keeps no element-by-element path beside
# ldmatrix (ld.shared.u16). Both fail where a tile's alignment is tested on
# its generic address, which the compiler cannot fold (both paths kept, the
# pairs stored as two scalar stores). Exits 77 (ctest: not run) without nvcc.
set -euo pipefail
rkc=$1 spec=$2 out=$3
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || { echo "nvcc not found: not run"; exit 77; }
name=$(basename "$spec" .mlir)
rm -rf "$out"
"$rkc" compile "$spec" -o "$out" --no-fatbin > /dev/null
"$nvcc" -ptx -std=c++17 -O3 -gencode=arch=compute_90a,code=compute_90a \
  -I "$out" -o "$out/$name.ptx" "$out/$name.cu"
# The tensor-core prefill (scan) kernel's body: from its entry to the next.
sed -n "/^.visible .entry rkc_${name}_prefill_kernel_tc(/,/^.visible .entry /p" \
  "$out/$name.ptx" > "$out/scan.ptx"
[ -s "$out/scan.ptx" ] || { echo "no rkc_${name}_prefill_kernel_tc in the PTX"; exit 1; }
pairs=$(grep -c 'st\.shared\.v2\.f32' "$out/scan.ptx" || true)
elements=$(grep -c 'ld\.shared\.u16' "$out/scan.ptx" || true)
echo "scan: $pairs st.shared.v2.f32, $elements ld.shared.u16"
((pairs > 0)) || { echo "no float32 pair is one vector store"; exit 1; }
((elements == 0)) || { echo "an element-by-element path is left beside ldmatrix"; exit 1; }
