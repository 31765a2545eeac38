#!/bin/bash
# One device call (nvidia-h200, 1 GPU) on the committed tree 0a249ad (after the GPU runs of 1401Z-1413Z it changed only
# the row-count section's size - the counts alone, the zeros being in host memory - and a helper's layout): the _ce
# twins' checks at TP = 2 / 4 / 8, gpu_epochs at TP = 2 (plain, captured), tier 2's variants group for the twins at
# TP = 2. Every rank on GPU 0, 32 queues for the _ce runs. Carry build/tpgemm, build/tests/gpu_epochs.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/all.log
run() { local name=$1; shift; echo "=== $name" >> $L
  CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 150 build/tpgemm --share-device "$@" --iterations 3 --warmup-iterations 1 \
    >> $L 2>&1; echo "| $name | rc=$? |"; }
run ce_tila_tp2_l2 --config rs_tila_bf16_ce_tp2 --m 2048 --n 2776 --k 4096 --l 2 --alpha 0.5 --beta 1
run ce_tilb_wide_tp4 --config rs_tilb_bf16_wide_ce_tp4 --m 4096 --n 8192 --k 8192
run ce_tilb_tp8_overlap --config rs_tilb_bf16_ce_tp8 --m 4096 --n 2048 --k 4096 --beta 1 --overlap-barriers
for a in "2" "2 --capture"; do
  echo "=== gpu_epochs $a" >> $L
  CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 200 build/tests/gpu_epochs $a --share-device >> $L 2>&1
  echo "| gpu_epochs $a | rc=$? | $(grep -E '^[0-9]+ passed' $L | tail -1) |"
done
cat > /tmp/tpg_ce.sh <<'SH'
#!/bin/bash
if [ "$*" = "--list" ]; then "$PWD/build/tpgemm" --list | awk 'NR == 1 || /_ce_tp/'; else exec "$PWD/build/tpgemm" "$@"; fi
SH
chmod +x /tmp/tpg_ce.sh
OUT=$OUT/t2 TPGEMM=/tmp/tpg_ce.sh TIER2_GROUPS=variants TIER2_BUDGET_S=150 timeout 200 \
  bash tests/gpu/run_tier2.sh --tp 2 --share-device >> $L 2>&1
echo "| tier 2 variants, _ce, TP = 2 | rc=$? |"; grep -A3 "^group" $L | tail -3
