#!/bin/bash
# old (77a859b) vs new (HEAD) CLI on the same GPU, alternated: the kernel's epoch change must cost nothing.
# Setup: build/probe/tpgemm_old from a worktree of 77a859b (python3 -m generator; ninja build/tpgemm), build/probe/tpgemm_new and
# build/probe/gpu_epochs copied from this tree's build/; carried as build/probe.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
date -u; nvidia-smi -L
one() { "$@" --no-check --json 2>/dev/null | python3 -c "import json,sys; print('%.4f' % json.load(sys.stdin)['avg_ms'])"; }
run() { local tag=$1; shift; local o=() n=()
  for rep in 1 2 3 4 5 6; do o+=($(one build/probe/tpgemm_old "$@")); n+=($(one build/probe/tpgemm_new "$@")); done
  python3 - "$tag" "${o[*]}" "${n[*]}" <<'P'
import sys, statistics as st
tag, o, n = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
print(f"{tag:44s} old {st.median(o):8.4f} ms  new {st.median(n):8.4f} ms  new/old {st.median(n)/st.median(o):.4f}  (old {o}, new {n})")
P
}
run "8B-o local rs_tila_bf16_tp1 8192x4096x4096" --config rs_tila_bf16_tp1 --tp 1 --m 8192 --n 4096 --k 4096 --iterations 400 --warmup-iterations 50
run "8B-qkv local ag_rota_bf16_wide_tp1 8192x6144x4096" --config ag_rota_bf16_wide_tp1 --tp 1 --m 8192 --n 6144 --k 4096 --iterations 400 --warmup-iterations 50
run "8192^3 local ag_rota_bf16_wide_tp1" --config ag_rota_bf16_wide_tp1 --tp 1 --m 8192 --n 8192 --k 8192 --iterations 150 --warmup-iterations 20
run "rs_tila_bf16_tp2 shared 4096x4096x512 table" --config rs_tila_bf16_tp2 --share-device --tp 2 --m 4096 --n 4096 --k 512 --iterations 1000 --warmup-iterations 100
run "ag_rota_bf16_wide_tp2 shared 4096x4096x4096 table" --config ag_rota_bf16_wide_tp2 --share-device --tp 2 --m 4096 --n 4096 --k 4096 --iterations 400 --warmup-iterations 50
run "rs_tila_bf16_tp2 shared 4096x4096x512 overlap" --config rs_tila_bf16_tp2 --share-device --tp 2 --m 4096 --n 4096 --k 512 --iterations 1000 --warmup-iterations 100 --overlap-barriers
run "ag_rota_bf16_wide_tp2 shared 2048x2048x4096 overlap" --config ag_rota_bf16_wide_tp2 --share-device --tp 2 --m 2048 --n 2048 --k 4096 --iterations 1000 --warmup-iterations 100 --overlap-barriers
build/probe/gpu_epochs 2 --share-device --capture | tail -1
build/probe/gpu_epochs 4 --share-device | tail -1
date -u
