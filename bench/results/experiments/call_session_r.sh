#!/bin/bash
# One device call (1 GPU, <= ~6 min): the 2026-12-06 (18:11Z-) session's runtime changes on the GPU, every rank on it.
# Function pointers now come from dlsym and the driver's entry points through their bytes (fn_ptr.h): the context's
# driver calls and tensor maps (every run), IPC's cuMemGetAddressRange (gpu_multiprocess), cuStreamBatchMemOp
# (copy-engine partials), NCCL's optional ncclCommInitRankConfig (--nccl); and tpg_op_run / tpg_op_run_rank take CUDA
# streams as CUDA declares them (gpu_epochs, gpu_timeout, gpu_pdl_chain pass cudaStream_t arrays). From the
# repository root:
#   bash bench/results/experiments/call_session_r.sh
OUT=${OUT:-build/session_r}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
NCCL_LIB=$(python3 -c "import sys; sys.path.insert(0, 'tests'); from test_gpu import nccl_library
print(nccl_library())")
echo "NCCL library: $NCCL_LIB" | tee -a "$R/provenance.txt"
logged build build.log 300 ninja build/tpgemm build/libtpgemm.so tests
for c in ag_rota_bf16_tp1 ag_rota_bf16_tp2 rs_tila_bf16_tp2 rs_tila_bf16_ce_tp2 ag_rota_e4m3_tp2; do
    logged "tpgemm --config $c --share-device" "cli_$c.log" 60 "${GPU_ENV[@]}" build/tpgemm --share-device \
        --config "$c" --m 4096 --n 4096 --k 4096 --iterations 20
    grep -E "check|TFLOP" "$R/cli_$c.log" | head -3
done
logged "gpu_epochs 2 --share-device" epochs_shared.log 90 "${GPU_ENV[@]}" build/tests/gpu_epochs 2 --share-device
grep -cE "one stream for ranks.*INVALID_ARGUMENT" "$R/epochs_shared.log"
logged "gpu_timeout 200 --share-device" timeout_shared.log 120 "${GPU_ENV[@]}" build/tests/gpu_timeout 200 \
    --share-device
logged "gpu_pdl_chain" pdl_chain.log 60 "${GPU_ENV[@]}" build/tests/gpu_pdl_chain
logged "gpu_multiprocess --share-device" mp_shared.log 120 "${GPU_ENV[@]}" build/tests/gpu_multiprocess \
    --share-device
logged "gpu_multiprocess --share-device --nccl" mp_nccl.log 150 "${GPU_ENV[@]}" TPG_NCCL_LIBRARY="$NCCL_LIB" \
    NCCL_DEBUG=VERSION build/tests/gpu_multiprocess --share-device --nccl
grep -E "NCCL version|passed|failed" "$R/mp_nccl.log" | head -4
cat "$OUT/summary.txt"
