#!/usr/bin/env bash
# rkc compile SPEC with nvcc, then checks what an engine gets: the four
# artifacts, sm_90a code in the fatbin, and a launcher and runtime that
# compile as C. Exits 77 (ctest: skipped, reported as not run) without nvcc.
# DK and DV (default 128) may follow.
set -euo pipefail
rkc=$1 spec=$2 out=$3 dk=${4:-128} dv=${5:-128}
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || { echo "nvcc not found: not run"; exit 77; }
name=$(basename "$spec" .mlir)
rm -rf "$out"
"$rkc" compile "$spec" -o "$out" --nvcc "$nvcc" --dk "$dk" --dv "$dv"
for f in "$name.h" "$name.cu" "$name.fatbin" "${name}_launch.c"; do
  [ -s "$out/$f" ] || { echo "missing $f"; exit 1; }
done
# An sm_90a cubin records its target in the fatbin (cuobjdump --list-elf
# shows it too, where cuobjdump is installed).
grep -q -a sm_90a "$out/$name.fatbin" || { echo "no sm_90a code in $name.fatbin"; exit 1; }
cc -std=c11 -Wall -Werror -c "$out/${name}_launch.c" -I "$out" -o "$out/launch.o"
cc -std=c11 -Wall -Werror -c "$out/rkc/runtime.c" -I "$out" -o "$out/runtime.o"
echo "compiled $name: $(stat -c %s "$out/$name.fatbin") bytes of fatbin"
