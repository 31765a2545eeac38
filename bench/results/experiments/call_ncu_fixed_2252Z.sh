#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/launch_diag.patch: Nsight Compute's own duration of
# one-tile GEMMs (16 x 128 x 64), so the kernel's time separates from the gaps between calls: the ping-pong 64x128,
# its skeleton (x_pp64_skel: no loads, wgmmas or epilogue), the stream-K 64x128, cuBLAS (torch.matmul), and the
# launch_cost.cu kernels (empty; prologue; TMA pair + store).
. bench/results/experiments/decode_call_lib.sh
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
MET=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,sm__warps_launched.sum
for c in ag_rota_bf16_pp64_tp1 x_pp64_skel_tp1 ag_rota_bf16_sk64_tp1; do
  timeout 90 $NCU --clock-control none --cache-control none -k regex:gemm_sm90 --launch-skip 5 --launch-count 3 \
    --metrics $MET build/tpgemm --config $c --tp 1 --devices 0 --m 16 --n 128 --k 64 --iterations 10 \
    > "$R/ncu_$c.txt" 2>&1; echo "ncu $c rc=$?"
done
cat > "$R/mm.py" <<'PY'
import torch
a = torch.randn(16, 64, device="cuda", dtype=torch.bfloat16)
b = torch.randn(128, 64, device="cuda", dtype=torch.bfloat16)
for _ in range(12):
    torch.matmul(a, b.t())
torch.cuda.synchronize()
PY
timeout 90 $NCU --clock-control none --cache-control none -k regex:'nvjet|gemm|cutlass|xmma' --launch-skip 5 \
  --launch-count 3 --metrics $MET python3 "$R/mm.py" > "$R/ncu_cublas.txt" 2>&1; echo "ncu cublas rc=$?"
timeout 90 $NCU --clock-control none --cache-control none -k regex:'k_empty|k_prologue|k_tma_store' --launch-skip 20 \
  --launch-count 6 --metrics $MET build/bench/launch_cost > "$R/ncu_launch_cost.txt" 2>&1; echo "ncu launch_cost rc=$?"
for f in "$R"/ncu_*.txt; do
  echo "== $f"
  grep -E '^  [a-zA-Z_].*\(|gpu__time_duration|sm__cycles_elapsed|inst_executed|warps_launched' "$f" | head -40
done
pack
