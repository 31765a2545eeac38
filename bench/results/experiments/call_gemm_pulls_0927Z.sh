#!/bin/bash
# The first device call of the gathered walk's pulls (nvidia-h200, 1 GPU, 2026-12-03 09:27Z): what
# call_gemm_pulls_0931Z.sh runs, with the end-to-end proxy on two shapes and the records left unpacked (82 of its 90
# files did not come back: gemm_pulls_0927Z/summary.txt holds what it printed).
SHAPES="10240 8192 70B-qkv;106496 16384 405B-fc1" PACK=0 bash "$(dirname "$0")/call_gemm_pulls_0931Z.sh"
