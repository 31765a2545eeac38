#!/usr/bin/env bash
# Builds the sm90 GEMM kernel self-test into build/selftest/ (git-ignored):
#   two kernel instances (bf16, fp16; the default shipped config 128x256x64, 4 stages, 2 consumers),
#   written exactly like generated instances, compiled with the product's flags, ptxas -v checked for
#   spills and "wgmma serialized" (C7511/C7512/C7515) warnings; then the host test, linked with cuBLAS
#   (test binary only). Run the binary on a Hopper machine: build/selftest/kernel_selftest
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/build/selftest"
mkdir -p "$out"
NVCC="${NVCC:-nvcc}"
FLAGS=(-gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -Xptxas -v -I "$root/templates/kernels" -I "$root/runtime/include")

inst() { # name ab cd
    cat > "$out/inst_$1.cu" <<EOT
// self-test instance, same shape as a generated kernel instance
#define TPG_KERNEL_NAME tpg_selftest_$1
#define TPG_ENTRY_NAME tpg_selftest_$1_entry
#define TPG_AB_DTYPE $2
#define TPG_CD_DTYPE $3
#define TPG_BM 128
#define TPG_BN 256
#define TPG_BK 64
#define TPG_STAGES 4
#define TPG_CONSUMERS 2
#define TPG_CLUSTER_M 1
#define TPG_CLUSTER_N 1
#define TPG_SMEM_BYTES $((4 * (128 + 256) * 64 * 2 + 2 * 128 * 128 + 2048))
#include "gemm_sm90.cuh"
EOT
    "$NVCC" "${FLAGS[@]}" -c "$out/inst_$1.cu" -o "$out/inst_$1.o" > "$out/ptxas_$1.log" 2>&1 ||
        { cat "$out/ptxas_$1.log"; exit 1; }
    echo "== ptxas $1"; grep -E "registers|spill|C75" "$out/ptxas_$1.log" || true
    if grep -qE "C751[0-9]" "$out/ptxas_$1.log"; then echo "FAIL: wgmma serialized ($1)"; exit 1; fi
    if grep -E "spill (stores|loads)" "$out/ptxas_$1.log" | grep -qvE "0 bytes spill stores, 0 bytes spill loads"; then
        echo "FAIL: register spills ($1)"; exit 1
    fi
}
inst bf16 0 0
inst fp16 1 1

"$NVCC" -gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -I "$root/templates/kernels" -I "$root/runtime/include" \
    -c "$root/tests/gpu/kernel_selftest.cu" -o "$out/kernel_selftest.o"
"$NVCC" -gencode arch=compute_90a,code=sm_90a -o "$out/kernel_selftest" "$out/kernel_selftest.o" "$out/inst_bf16.o" \
    "$out/inst_fp16.o" -lcublas
echo "built $out/kernel_selftest"
