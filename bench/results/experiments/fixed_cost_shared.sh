#!/bin/bash
# Device call: a fused call's fixed cost on one GPU (ranks side by side, in-process shared): tiny problems, where
# a call is mostly its graph's launch, barriers, copies and flags; table graph vs barriers beside the GEMM.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
run() { local tag=$1; shift; for rep in 1 2 3; do
  build/tpgemm "$@" --iterations 3000 --warmup-iterations 200 --no-check --json 2>/dev/null |
    python3 -c "import json,sys; r=json.load(sys.stdin); print('$tag', 'rep$rep', 'us/call %.2f' % (1e3*r['avg_ms']))"; done; }
date -u; nvidia-smi -L
for size in "512 512 256" "2048 2048 512"; do set -- $size
  run "local1  $1x$2x$3" --config ag_rota_bf16_wide_tp1 --tp 1 --m $1 --n $2 --k $3
  run "AG tbl  $1x$2x$3" --share-device --tp 2 --config ag_rota_bf16_wide_tp2 --m $1 --n $2 --k $3
  run "AG ovl  $1x$2x$3" --share-device --tp 2 --config ag_rota_bf16_wide_tp2 --m $1 --n $2 --k $3 --overlap-barriers
  run "RS tbl  $1x$2x$3" --share-device --tp 2 --config rs_tila_bf16_tp2 --m $1 --n $2 --k $3
  run "RS ovl  $1x$2x$3" --share-device --tp 2 --config rs_tila_bf16_tp2 --m $1 --n $2 --k $3 --overlap-barriers
done
date -u
