import os, sys, torch
sys.path.insert(0, "python"); sys.path.insert(0, ".fla")
os.environ["RKC"] = os.path.abspath(".devbin/rkc")
import rkc_torch
from fla.ops.kda import chunk_kda as fla_kda
torch.manual_seed(0)
B, T, H, D = 1, 400, 2, 64
q = torch.randn(B, T, H, D, device="cuda").bfloat16(); k = torch.randn(B, T, H, D, device="cuda").bfloat16()
v = torch.randn(B, T, H, D, device="cuda").bfloat16()
g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, D, device="cuda")).clamp(-5, 0)
beta = torch.rand(B, T, H, device="cuda").bfloat16()
cu = torch.tensor([0, 37, 390, 400], device="cuda"); h0 = torch.randn(3, H, D, D, device="cuda")
# positional, exactly as fla's signature orders them
a = rkc_torch.chunk_kda(q, k, v, g, beta, None, h0, True, True, False, False, False, False, None, False, False, False, cu, cu.cpu())
b = fla_kda(q, k, v, g, beta, None, h0, True, True, False, False, False, False, None, False, False, False, cu, cu.cpu())
rel = lambda x, y: ((x.double() - y.double()).norm() / y.double().norm()).item()
print("drop-in positional chunk_kda vs fla:", rel(a[0], b[0]), rel(a[1], b[1]))
