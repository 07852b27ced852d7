#!/usr/bin/env bash
# The README's embedding examples, run as written, against an installed
# prefix ($PREFIX, default $HOME/rkc; built where LLVM is and carried here).
set -euo pipefail
cd "$(dirname "$0")/../.."
PREFIX=${PREFIX:-$HOME/rkc}
rm -rf build/embed-c
cmake -S examples/embed-c -B build/embed-c -DCMAKE_PREFIX_PATH="$PREFIX" > /dev/null
cmake --build build/embed-c > /dev/null && build/embed-c/eda_prefill_decode
export PYTHONPATH="$PREFIX/share/rkc/python" RKC="$PREFIX/bin/rkc"
python3 - <<'PY'
import torch
from rkc_torch import chunk_kda          # in place of: from fla.ops.kda import chunk_kda
B, T, H, D = 2, 512, 4, 128
q, k = (torch.nn.functional.normalize(torch.randn(B, T, H, D, device="cuda"), dim=-1).bfloat16() for _ in range(2))
v = torch.randn(B, T, H, D, device="cuda").bfloat16()
g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, D, device="cuda")).clamp(-5, 0)
beta = torch.rand(B, T, H, device="cuda").bfloat16()
o, state = chunk_kda(q, k, v, g, beta, initial_state=None, output_final_state=True)
print(o.shape, state.shape)
PY
