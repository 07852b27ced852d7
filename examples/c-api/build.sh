#!/usr/bin/env bash
# Builds kda_check with the CUDA toolkit alone (no LLVM/MLIR):
#   RKC=build/bin/rkc OUT=build/c-api bash examples/c-api/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rkc=${RKC:-$here/../../build/bin/rkc}
out=${OUT:-$here/../../build/c-api}
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || { echo "nvcc not found: not built"; exit 77; }
"$rkc" compile "$here/../specs/kda.mlir" -o "$out/generated" --dk 64 --dv 64 --nvcc "$nvcc"
"$nvcc" -O2 -o "$out/kda_check" "$here/kda_check.c" \
  "$out/generated/kda_launch.c" "$out/generated/rkc/runtime.c" \
  -I "$out/generated" -ldl -lpthread
echo "built $out/kda_check"
