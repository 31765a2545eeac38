import torch
a = torch.randn(16, 64, device="cuda", dtype=torch.bfloat16)
b = torch.randn(128, 64, device="cuda", dtype=torch.bfloat16)
for _ in range(12):
    torch.matmul(a, b.t())
torch.cuda.synchronize()
