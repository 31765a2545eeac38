#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the gathered walk's pulls with the slice queue (a review found that the fixed
# slice per CTA made the grid-wide wait need every CTA resident: pull_shards.cuh), checked and timed as
# call_gemm_pulls_0931Z.sh did - self-test cases, gpu_epochs, tier 2's gathered group, the end-to-end proxy on 70B-qkv
# and 8B-qkv (pulls against copy nodes, every rank on the one GPU) - records packed into one file.
SHAPES="10240 8192 70B-qkv;6144 4096 8B-qkv" bash "$(dirname "$0")/call_gemm_pulls_0931Z.sh"
