#!/usr/bin/env bash
# A fresh consumer of the installed package: `cmake --install` into a
# temporary prefix, then configure and build examples/embed-c against it with
# the CUDA toolkit alone, and check that no LLVM/MLIR path reached its
# compile lines. Exits 77 (ctest: not run) without nvcc. RUN=1 also runs it.
set -euo pipefail
build=$1 source=$2 work=$3
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$nvcc" ] || nvcc=$(command -v nvcc) || { echo "nvcc not found: not run"; exit 77; }
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work.install.log"
cmake -S "$source/examples/embed-c" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCUDAToolkit_ROOT="$(dirname "$(dirname "$nvcc")")" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
cmake --build "$work/consumer"
if grep -Eiq 'llvm|mlir' "$work/consumer/compile_commands.json"; then
  echo "the consumer's compile lines mention LLVM or MLIR:"
  grep -Ei 'llvm|mlir' "$work/consumer/compile_commands.json"
  exit 1
fi
echo "consumer built: $work/consumer/eda_prefill_decode"
if [ "${RUN:-0}" = 1 ]; then "$work/consumer/eda_prefill_decode"; fi
