"""What each operand type means to the TP benchmark's torch baselines (bench/tp_bench.py): how operands are made,
the output type, the local GEMM (cuBLAS through torch), the NCCL all-gather of operands, and PyTorch's async-TP
ops. 16-bit: torch.mm and fused_all_gather_matmul / fused_matmul_reduce_scatter. e4m3: per-tensor scales, bf16
outputs, torch._scaled_mm with fast accumulation (what tpgemm's e4m3 kernels compute: the tensor pipe's fp8 sums
over the whole K) and the scaled async-TP ops, whose schemas are those of torch 2.11 (docs/PERF_NOTES.md).
e4m3_promoted: the same without fast accumulation (torch promotes the sums to f32, as tpgemm's fp8_promote
configs do)."""
import functools

import torch
from tp_records import DTYPES  # noqa: F401 - the names for_dtype takes (defined torch-free for tp_bench's parser)


@functools.lru_cache(maxsize=None)
def no_gathered_a():
    """{"return_A": False} where this torch's fused_all_gather_matmul takes return_A (newer ones: it copies the
    gathered A into a returned tensor on every call unless told not to, work tpgemm's fused call does not do), else
    {}. Asked at the first call: the op is defined when torch.distributed._symmetric_memory is imported."""
    import torch.distributed._symmetric_memory  # noqa: F401 - defines the symm_mem ops
    schema = str(torch.ops.symm_mem.fused_all_gather_matmul.default._schema)
    return {"return_A": False} if "return_A" in schema else {}


class Numerics16:
    """bf16 / fp16: operands and outputs of one type, no scales."""

    def __init__(self, dtype):
        self.dtype = self.out = dtype
        self.scales = {}  # tpgemm_lib Op.set_torch_tensors' scale_a / scale_b: none

    def operand(self, g, *shape):
        return torch.randn(*shape, device="cuda", dtype=self.dtype, generator=g)

    def output(self, *shape):
        return torch.empty(*shape, device="cuda", dtype=self.out)

    def operand_empty(self, *shape):
        return torch.empty(*shape, device="cuda", dtype=self.dtype)

    def mm(self, a, b, out):
        """out = a · bᵀ (b stored N x K, as tpgemm's B)."""
        torch.mm(a, b.t(), out=out)

    def gather(self, dist, out, shard):
        dist.all_gather_into_tensor(out, shard)

    def async_ag(self, a, b, group_name):  # D: the op returns (gathered A or None, [D])
        return torch.ops.symm_mem.fused_all_gather_matmul(a, [b.t()], gather_dim=0, group_name=group_name,
                                                           **no_gathered_a())[1][0]

    def async_rs(self, a, b, m, n, group_name):
        return torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b.t(), "sum", scatter_dim=0, group_name=group_name)


class NumericsE4m3(Numerics16):
    """e4m3 operands (standard-normal values rounded to e4m3), per-tensor scales 0.5 and 2, bf16 outputs; torch's
    GEMMs with fast accumulation, or without (fast_accum False: sums promoted to f32)."""

    def __init__(self, fast_accum=True):
        self.fast_accum = fast_accum
        self.dtype, self.out = torch.float8_e4m3fn, torch.bfloat16
        self.scale_a = torch.full((), 0.5, device="cuda", dtype=torch.float32)
        self.scale_b = torch.full((), 2.0, device="cuda", dtype=torch.float32)
        self.scales = {"scale_a": self.scale_a, "scale_b": self.scale_b}

    def operand(self, g, *shape):
        return torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g).to(self.dtype)

    def mm(self, a, b, out):
        torch._scaled_mm(a, b.t(), self.scale_a, self.scale_b, out_dtype=self.out, use_fast_accum=self.fast_accum,
                         out=out)

    def gather(self, dist, out, shard):  # NCCL moves the bytes; no fp8 type needed
        dist.all_gather_into_tensor(out.view(torch.uint8), shard.view(torch.uint8))

    def async_ag(self, a, b, group_name):  # D: the op returns (gathered A, [D])
        _, outs = torch.ops.symm_mem.fused_all_gather_scaled_matmul(
            a, [b.t()], self.scale_a, [self.scale_b], 0, group_name, [None], [None], [self.out], [self.fast_accum])
        return outs[0]

    def async_rs(self, a, b, m, n, group_name):
        return torch.ops.symm_mem.fused_scaled_matmul_reduce_scatter(
            a, b.t(), self.scale_a, self.scale_b, "sum", 0, 0, group_name, [m, n], out_dtype=self.out,
            use_fast_accum=self.fast_accum)


def for_dtype(name):
    """The numerics of tp_bench.py's --dtype NAME."""
    if name in ("e4m3", "e4m3_promoted"):
        return NumericsE4m3(fast_accum=name == "e4m3")
    return Numerics16({"bf16": torch.bfloat16, "fp16": torch.float16}[name])
