"""Probe: can PyTorch's async-TP ops run with both ranks on one GPU (gloo group, symmetric memory)?"""
import faulthandler, os, sys, traceback
sys.path.insert(0, "bench")  # run from the repository root
faulthandler.dump_traceback_later(90, exit=True)
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank, tp = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(0)
import tp_numerics
import tp_bench
tp_bench.load_torch()  # tp_bench loads torch only once asked (its options are parsed without)
C = tp_bench.SumCollectives
gn = dist.group.WORLD.group_name
try:
    import torch.distributed._symmetric_memory as symm
    symm.enable_symm_mem_for_group(gn)
    print(f"rank {rank}: symm enabled, backend {getattr(symm, 'get_backend', lambda *a: '?')(torch.device('cuda')) if hasattr(symm,'get_backend') else '?'}", flush=True)
except Exception:
    traceback.print_exc()
m = n = k = 1024
for dt in ("bf16", "e4m3"):
    num = tp_numerics.for_dtype(dt)
    g = torch.Generator(device="cuda").manual_seed(5 + rank)
    for op in ("AG", "RS"):
        try:
            if op == "AG":
                a, b = num.operand(g, m // tp, k), num.operand(g, n // tp, k)
                out = num.async_ag(a, b, gn)
                d = out[1][0] if isinstance(out, (tuple, list)) else out
                a_full = num.operand_empty(m, k); C.all_gather_into_tensor(a_full, a)
                ref = num.output(m, n // tp); num.mm(a_full, b, ref)
            else:
                a, b = num.operand(g, m, k // tp), num.operand(g, n, k // tp)
                d = num.async_rs(a, b, m, n, gn)
                part = num.output(m, n); num.mm(a, b, part)
                ref = num.output(m // tp, n); C.reduce_scatter_tensor(ref, part)
            torch.cuda.synchronize()
            err = ((d.float() - ref.float()).norm() / ref.float().norm()).item()
            print(f"rank {rank} {dt} {op}: shape {tuple(d.shape)} rel err {err:.2e}", flush=True)
        except Exception as e:
            print(f"rank {rank} {dt} {op}: FAILED {e!r}"[:400], flush=True)
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: done", flush=True)
