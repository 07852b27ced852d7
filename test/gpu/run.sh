#!/usr/bin/env bash
# The GPU test: one command on a machine with a GPU, nvcc, cc and PyTorch.
# RKC=path/to/rkc (a statically linked build travels without LLVM).
set -euo pipefail
cd "$(dirname "$0")/../.."
RKC=${RKC:-build/bin/rkc}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
export RKC_COMMIT=${RKC_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
# The C example: built with nvcc alone, run here.
RKC="$RKC" OUT=/tmp/rkc-c-api bash examples/c-api/build.sh > /tmp/rkc-c-api.log 2>&1 \
  || { cat /tmp/rkc-c-api.log; exit 1; }
/tmp/rkc-c-api/kda_check
# The sm_90a code in a fatbin.
command -v cuobjdump > /dev/null && cuobjdump --list-elf /tmp/rkc-c-api/generated/kda.fatbin
exec python3 test/gpu/check.py --rkc "$RKC" "$@"
