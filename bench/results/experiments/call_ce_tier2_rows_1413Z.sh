#!/bin/bash
# One device call (nvidia-h200, 1 GPU), call_ce_tier2_1141Z.sh again after the copy chains moved to tile-row counts
# (2026-12-04 14:13Z): tier 2's variants group with every rank on GPU 0 (`--share-device`) for the four copy-engine
# twins only, at TP = 2 and 4 - 70B-qkv, 70B-o, 8B-o and small-a each, the reference check with poisoned output and
# bitwise determinism over 3 runs - through run_tier2.sh's own runner, which gives the _ce runs
# CUDA_DEVICE_MAX_CONNECTIONS=32 and the others the default. TPGEMM is a wrapper that lists only the _ce configs
# (`--list`) and runs build/tpgemm otherwise. Carry build/tpgemm.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cat > /tmp/tpg_ce.sh <<'SH'
#!/bin/bash
if [ "$*" = "--list" ]; then "$PWD/build/tpgemm" --list | awk 'NR == 1 || /_ce_tp/'; else exec "$PWD/build/tpgemm" "$@"; fi
SH
chmod +x /tmp/tpg_ce.sh
for tp in 2 4; do
  OUT=$OUT/t2_tp$tp TPGEMM=/tmp/tpg_ce.sh TIER2_GROUPS=variants TIER2_BUDGET_S=150 timeout 200 \
    bash tests/gpu/run_tier2.sh --tp $tp --share-device > $OUT/tier2_tp$tp.log 2>&1
  echo "| tier 2 variants, _ce, TP = $tp | rc=$? |"; tail -6 $OUT/tier2_tp$tp.log
done
grep -ho "\"command\": \"env CUDA_DEVICE_MAX_CONNECTIONS=32[^,]*" $OUT/t2_tp*/tier2_shared_tp*.json 2>/dev/null | head -2 | cut -c1-200
