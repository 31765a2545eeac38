#!/bin/bash
# Device call: small fused calls on one shared GPU, table graph vs barriers beside the GEMM, with the host's
# launch cost per call (host_launch_ms) next to the device's time per call (avg_ms).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
run() { local tag=$1; shift; for rep in 1 2; do
  build/tpgemm "$@" --iterations 1500 --warmup-iterations 100 --no-check --json 2>/dev/null |
    python3 -c "import json,sys; r=json.load(sys.stdin); print('%-28s rep$rep  device %7.2f us/call  host launch %6.2f us/call' % ('$tag', 1e3*r['avg_ms'], 1e3*r['host_launch_ms']))"; done; }
date -u; nvidia-smi -L
run "local1 2048x2048x512" --config ag_rota_bf16_wide_tp1 --tp 1 --m 2048 --n 2048 --k 512
for size in "2048 2048 512" "4096 4096 512" "2048 2048 4096"; do set -- $size
  for c in ag_rota_bf16_wide_tp2 rs_tila_bf16_tp2; do
    run "$c tbl $1x$2x$3" --share-device --tp 2 --config $c --m $1 --n $2 --k $3
    run "$c ovl $1x$2x$3" --share-device --tp 2 --config $c --m $1 --n $2 --k $3 --overlap-barriers
  done
done
timeout 120 python3 -m pytest -q -rs tests/test_gpu.py -k "fused_schedule_on_a_shared_device" 2>&1 | tail -2
date -u
