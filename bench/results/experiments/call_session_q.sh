#!/bin/bash
# One device call (1 GPU, <= ~4 min): the 2026-12-06 (16:04Z-) session's fixes after the review of its diff, and a
# negative control: gpu_epochs --share-device (the stream refusals; flags now read only where ranks share a device),
# the captured NCCL case (one graph outlives the context; an alarm fails a destroy that waits for it), and the same
# case built with the destroy left synchronous (tpg_nccl_release's captured branch removed, in a copy of the tree):
# the rank's destroy should then wait for the caller's graph, which is destroyed only after it - the alarm's message,
# if the machine's NCCL waits for graphs holding its plans as its source says. From the repository root:
#   bash bench/results/experiments/call_session_q.sh
OUT=${OUT:-build/session_q}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
NCCL_LIB=$(python3 -c "import sys; sys.path.insert(0, 'tests'); from test_gpu import nccl_library
print(nccl_library())")
echo "NCCL library: $NCCL_LIB" | tee -a "$R/provenance.txt"
logged build build.log 240 ninja build/tpgemm build/libtpgemm.so tests
logged "gpu_epochs 2 --share-device" epochs_shared.log 90 "${GPU_ENV[@]}" build/tests/gpu_epochs 2 --share-device
grep -cE "one stream for ranks.*INVALID_ARGUMENT" "$R/epochs_shared.log"
grep -E "passed" "$R/epochs_shared.log" | tail -1
logged "gpu_epochs captured over NCCL" epochs_nccl.log 150 "${GPU_ENV[@]}" TPG_NCCL_LIBRARY="$NCCL_LIB" \
    NCCL_DEBUG=VERSION build/tests/gpu_epochs 2 --share-device --processes --nccl --capture
grep -E "destroy|passed, |NCCL version" "$R/epochs_nccl.log" | head -8
# the negative control: the same binary with the destroy synchronous after a capture
rm -rf /tmp/neg && cp -a . /tmp/neg # -a: the build keeps its times, so only nccl.o is rebuilt
sed -i 's/    else if (n->comm \&\& n->comm_destroy \&\& n->captured)/    else if (0)/' /tmp/neg/runtime/src/nccl.c
grep -c "else if (0)" /tmp/neg/runtime/src/nccl.c
logged "negative control: build" neg_build.log 120 ninja -C /tmp/neg build/tests/gpu_epochs
logged "negative control: gpu_epochs captured over NCCL" neg_epochs_nccl.log 150 "${GPU_ENV[@]}" \
    TPG_NCCL_LIBRARY="$NCCL_LIB" NCCL_DEBUG=VERSION /tmp/neg/build/tests/gpu_epochs 2 --share-device --processes \
    --nccl --capture
grep -E "destroy|passed, |NCCL version" "$R/neg_epochs_nccl.log" | head -8
cat "$OUT/summary.txt"
