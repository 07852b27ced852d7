#!/usr/bin/env bash
# The GPU test: one command on a machine with a GPU, nvcc, cc and PyTorch.
# RKC=path/to/rkc (a statically linked build travels without LLVM).
set -euo pipefail
cd "$(dirname "$0")/../.."
RKC=${RKC:-build/bin/rkc}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
export RKC_COMMIT=${RKC_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
exec python3 test/gpu/check.py --rkc "$RKC" "$@"
