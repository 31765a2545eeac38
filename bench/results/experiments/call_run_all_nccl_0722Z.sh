#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the one-GPU rehearsal of the first x2 call on the final tree - tier 2 shared
# at TP = 2, the whole GPU pytest (the NCCL transport's cases included), the TP benchmark's smoke run with --alt-nccl.
export OUT=${OUT:-/tmp/out}
RUN_ALL_BUDGET_S=420 TP_ARGS="--alt-nccl --only 8B-qkv,8B-o,70B-o" tests/gpu/run_all.sh --tp 2 --share-device \
    --skip local_gemm,tune
