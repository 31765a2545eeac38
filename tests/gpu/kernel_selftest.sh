#!/usr/bin/env bash
# Builds the sm90 GEMM kernel self-test into build/selftest/ (git-ignored):
#   kernel instances from -D macros (tests/gpu/selftest_instance.cu, the same TPG_* set a generated
#   instance defines): the cooperative 128x256x64, 4 stages, 2 consumers in bf16 and fp16, and bf16
#   instances of the optional features - clusters 2x1 and 1x2 (TMA multicast), ping-pong
#   128x128 (5 stages), 64x256 (4 stages), 128x128 with the 64x32 epilogue subtile (6 stages: 64-byte
#   store rows, 64B swizzle), the cluster 2x1 with raster: hilbert (walk order from a table built by
#   runtime/src/raster.c), the shipped "_wide" kernel (3 stages, 5 store buffers per warpgroup) and a
#   cooperative_n 192x192 (warpgroups split the tile along N: m64n96, 64-byte store rows) and 128x320 in a
#   2x1 cluster (w320: m64n160, 160 accumulators, no deferred stores), the ping-pong
#   128x128 with deferred signal flags (pp128df, `deferred_flags: true`), ping-pong 128x128 with pipelined
#   partial loads (pp128ps, `prefetch_sources: true`), both (pp128both), TMA-loaded partials (pp128tma,
#   `tma_partials: true`), fp16 instances with f16 accumulation (fp16h: the "_wide" kernel, pp128h: the
#   ping-pong with TMA-loaded partials; `acc: f16`), the wide kernel with TMA-loaded partials (wide3tma, fp16tma: the shipped "_rs" kernels), the shipped fp16 "_wide" kernel (fp16w), the shipped fp8 kernels (e4m3w, e4m3pp, e5m2w: BK 128, bf16 outputs) and
#   e4m3 with TMA-loaded partials (e4m3tma, e4m3pptma: the shipped e4m3 "_rs" and "_pp_rs" kernels), e4m3 promoting its sums into f32 every 8 / 1 k-blocks (e4m3p8: the
#   shipped `fp8_promote: 8` 128x160, e4m3p8tma its "_rs" twin with TMA-loaded partials, e4m3p1 a 128x128), fp32 reduce-scatter partials (pp128p32, wide3p32: the shipped `partials: f32`
#   kernels), 64-byte ring slots (`bk: 32`, 64B swizzle: k32 the
#   wide kernel with 6 stages, c2x1k32 the 2x1 cluster with 8), the few-token tiles (w160: the shipped cooperative
#   128x160, 32-column store units; pp64tma: the shipped ping-pong 64x128 with TMA-loaded partials); every
#   cooperative one defers its last store units into the next mainloop (epilogue_deferred.cuh) -
#   compiled with the product's flags in parallel; ptxas -v
#   is checked for spills and "wgmma serialized" (C7511/C7512/C7515) warnings and summarized; then the
#   host test (kernel_selftest.cu + selftest_util.cu + selftest_{cublas_perf,rs_perf,ce_chain,ag_perf,coresident}.cu +
#   runtime/src/barrier.cu),
#   linked with cuBLAS (test binary only).
# Run on a Hopper machine: build/selftest/kernel_selftest [--no-perf] [--no-cases] [--rs-perf] [--rs-parts] [--rs-few]
#   [--rs-far] [--ag-perf] [--ag-few] [--variants NAME[,NAME...]] [--coresident] [--pulls] [--pieces-control]
#   [--only NAME[,NAME...]]
#   [--problem NAME[,NAME...]: the --rs-* / --ag-* problems named, e.g. 70B-fc2-m128]
#   (bf16 fp16 c2x1 c1x2 pp128 pp64 pp128s32 c2x1h wide3 sn192 w320 pp128df pp128ps pp128both pp128tma fp16h pp128h
#   k32 c2x1k32 wide3tma fp16tma fp16w e4m3w e4m3pp e5m2w e4m3tma e4m3pptma e4m3p8 e4m3p8tma e4m3p1 pp128p32 wide3p32
#   w160 pp64tma wide3nd wide3old pp64g1 wide3fx pp128tdf pp128sp pp64sp pp128spd pp128tdq pp128spq pp128tdr)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(realpath -m "${SELFTEST_OUT:-$root/build/selftest}")" # SELFTEST_OUT: another build beside it (nvcc_cuda12.sh)
mkdir -p "$out"
NVCC="${NVCC:-nvcc}"
ARCH=(-gencode arch=compute_90a,code=sm_90a)
INC=(-I "$root/templates/kernels" -I "$root/runtime/include" -I "$root/runtime/src" -I "$root/tests/gpu")

# smem as generator/kernels.py computes it: stages*(BM+BN)*BK*sizeof(operand) + epilogue + 2048, where the epilogue is
# 2*BM*128 (cooperative) or 4*BM*128 (ping-pong: two warpgroups, each with whole tiles)
inst() { # name ab cd bm bn stages cluster_m cluster_n mode(0 coop, 1 pingpong, 2 cooperative_n) [epilogue chunk bytes] [raster]
       #      [store buffers per warpgroup (0: the default, 2 per m64 slab)] ["A=1 -DB=1": more -D defines] [bk]
    local chunk=${10:-128} raster=${11:-0} bufs=${12:-0} extra=${13:-} bk=${14:-64}
    local epi=$((2 * $4 * chunk * ($9 == 0 ? 1 : 2))) # default buffers: 2 per m64 slab a warpgroup owns
    [ "$bufs" != 0 ] && epi=$((2 * bufs * 64 * chunk))
    local esize=$(($2 >= 2 ? 1 : 2)) # operand bytes: fp8 (2 e4m3, 3 e5m2) 1, bf16 / fp16 2
    local smem=$(($6 * ($4 + $5) * bk * esize + epi + 2048))
    "$NVCC" "${ARCH[@]}" -O3 -std=c++17 -Xptxas -v "${INC[@]}" \
        -DTPG_KERNEL_NAME=tpg_selftest_$1 -DTPG_ENTRY_NAME=tpg_selftest_$1_entry -DTPG_AB_DTYPE=$2 -DTPG_CD_DTYPE=$3 \
        -DTPG_BM=$4 -DTPG_BN=$5 -DTPG_BK=$bk -DTPG_STAGES=$6 -DTPG_CONSUMERS=2 -DTPG_CLUSTER_M=$7 -DTPG_CLUSTER_N=$8 \
        -DTPG_CONSUMER_MODE=$9 -DTPG_SMEM_BYTES=$smem -DTPG_GROUP_M=${GROUP_M:-8} -DTPG_EPI_CHUNK_BYTES=$chunk -DTPG_RASTER=$raster \
        $([ "$bufs" != 0 ] && echo "-DTPG_EPI_BUFFERS=$bufs") $([ -n "$extra" ] && echo "-D$extra") \
        -c "$root/tests/gpu/selftest_instance.cu" -o "$out/inst_$1.o" > "$out/ptxas_$1.log" 2>&1 ||
        { cat "$out/ptxas_$1.log"; return 1; }
}
KERNELS=(bf16 fp16 c2x1 c1x2 pp128 pp64 pp128s32 c2x1h wide3 sn192 w320 pp128df pp128ps pp128both pp128tma fp16h pp128h k32 c2x1k32 wide3tma fp16tma fp16w e4m3w e4m3pp e5m2w e4m3tma e4m3pptma e4m3p8 e4m3p8tma e4m3p1 pp128p32 wide3p32 w160 pp64tma wide3nd wide3old pp64g1 wide3fx)
KERNELS+=(pp128tdf pp128sp pp64sp pp128spd pp128tdq pp128spq pp128tdr)
pids=()
inst bf16 0 0 128 256 4 1 1 0 & pids+=($!)
inst fp16 1 1 128 256 4 1 1 0 & pids+=($!)
inst c2x1 0 0 128 256 4 2 1 0 & pids+=($!)
inst c1x2 0 0 128 256 4 1 2 0 & pids+=($!)
inst pp128 0 0 128 128 5 1 1 1 & pids+=($!)
inst pp64 0 0 64 256 4 1 1 1 & pids+=($!)
inst pp128s32 0 0 128 128 6 1 1 1 64 & pids+=($!) # epilogue subtile 64x32: 64-byte rows, 6 stages fit
inst c2x1h 0 0 128 256 4 2 1 0 128 1 & pids+=($!)  # raster: hilbert (walk order from a table), clusters
inst wide3 0 0 128 256 3 1 1 0 128 0 5 & pids+=($!) # the shipped "_wide" kernel: 3 stages, 5 store buffers
inst sn192 0 0 192 192 4 1 1 2 64 0 3 & pids+=($!)  # cooperative_n 192x192: m64n96 per warpgroup, 64-byte rows
inst w320 0 0 128 320 3 2 1 2 64 & pids+=($!)        # cooperative_n 128x320 in a 2x1 cluster: m64n160, 160-row B halves
inst pp128df 0 0 128 128 5 1 1 1 128 0 0 TPG_PP_DEFER_FLAGS=1 & pids+=($!) # ping-pong, deferred signal flags
inst pp128ps 0 0 128 128 5 1 1 1 128 0 0 TPG_PREFETCH_SOURCES=1 & pids+=($!) # ping-pong, pipelined source loads
inst pp128both 0 0 128 128 5 1 1 1 128 0 0 "TPG_PP_DEFER_FLAGS=1 -DTPG_PREFETCH_SOURCES=1" & pids+=($!) # both
inst pp128tma 0 0 128 128 5 1 1 1 128 0 0 TPG_TMA_PARTIALS=1 & pids+=($!) # ping-pong, partials by TMA + ldmatrix
inst wide3tma 0 0 128 256 3 1 1 0 128 0 5 TPG_TMA_PARTIALS=1 & pids+=($!) # the wide kernel, partials by TMA (deferred epilogue too)
inst fp16tma 1 1 128 256 3 1 1 0 128 0 5 TPG_TMA_PARTIALS=1 & pids+=($!) # the shipped fp16 "_rs" kernel
inst fp16w 1 1 128 256 3 1 1 0 128 0 5 & pids+=($!) # the shipped fp16 "_wide" kernel
inst e4m3w 2 0 128 256 3 1 1 0 128 0 5 "" 128 & pids+=($!)  # the shipped e4m3 wide kernel (BK 128, bf16 out)
inst e4m3pp 2 0 128 128 5 1 1 1 128 0 0 "" 128 & pids+=($!) # the shipped e4m3 ping-pong kernel
inst e5m2w 3 0 128 256 3 1 1 0 128 0 5 "" 128 & pids+=($!)  # the shipped e5m2 wide kernel
inst e4m3tma 2 0 128 256 3 1 1 0 128 0 5 TPG_TMA_PARTIALS=1 128 & pids+=($!) # e4m3 with TMA-loaded partials (the shipped e4m3 _rs kernel)
inst e4m3pptma 2 0 128 128 5 1 1 1 128 0 0 TPG_TMA_PARTIALS=1 128 & pids+=($!) # e4m3 ping-pong with TMA-loaded partials (shipped _pp_rs)
inst pp128p32 0 0 128 128 5 1 1 1 128 0 0 TPG_PARTIAL_F32=1 & pids+=($!) # ping-pong, fp32 partials (shipped bf16_128x128x64_pp_f32p)
inst wide3p32 0 0 128 256 3 1 1 0 128 0 5 "TPG_PARTIAL_F32=1 -DTPG_DEFER_STORES=0" & pids+=($!) # wide, fp32 partials, no deferred stores (shipped _f32p)
inst e4m3p8 2 0 128 160 5 1 1 0 64 0 0 TPG_FP8_PROMOTE=8 128 & pids+=($!) # the shipped promoting e4m3 kernel (128x160)
inst e4m3p8tma 2 0 128 160 5 1 1 0 64 0 5 "TPG_FP8_PROMOTE=8 -DTPG_TMA_PARTIALS=1" 128 & pids+=($!) # its _rs twin
inst e4m3p1 2 0 128 128 6 1 1 0 128 0 0 TPG_FP8_PROMOTE=1 128 & pids+=($!) # 128x128, promotion after every k-block
inst fp16h 1 1 128 256 3 1 1 0 128 0 5 TPG_ACC_F16=1 & pids+=($!) # fp16 "_wide" with f16 accumulation (acc: f16)
inst pp128h 1 1 128 128 5 1 1 1 128 0 0 "TPG_ACC_F16=1 -DTPG_TMA_PARTIALS=1" & pids+=($!) # fp16 ping-pong, f16 acc
inst k32 0 0 128 256 6 1 1 0 128 0 5 "" 32 & pids+=($!)  # bk 32 (64-byte slots, 64B swizzle): the wide kernel, 6 stages
inst c2x1k32 0 0 128 256 8 2 1 0 128 0 0 "" 32 & pids+=($!) # bk 32 in a 2x1 cluster: 8 stages in the memory of 4
inst w160 0 0 128 160 5 1 1 0 64 & pids+=($!)        # the shipped 128x160 (`*_w160`): five 32-column store units a slab
inst pp64tma 0 0 64 128 8 1 1 1 128 0 0 TPG_TMA_PARTIALS=1 & pids+=($!) # the shipped ping-pong 64x128 (`*_pp64`)
# wide3tma with its signal flags raised at once (wide3nd) and always deferred (wide3old, the rule before 2026-12-02)
inst wide3nd 0 0 128 256 3 1 1 0 128 0 5 "TPG_TMA_PARTIALS=1 -DTPG_DIAG_NO_DEFER_FLAGS=1" & pids+=($!)
inst wide3old 0 0 128 256 3 1 1 0 128 0 5 "TPG_TMA_PARTIALS=1 -DTPG_DIAG_DEFER_FLAGS_ALWAYS=1" & pids+=($!)
# pp64tma with raster groups of one unit row (GROUP_M=1): a plain GEMM whose tiles of one B column sit a whole tile row
# apart, as a stage-major ring places them (the placement check of docs/PERF_NOTES.md, 2026-12-02 19:03Z)
GROUP_M=1 inst pp64g1 0 0 64 128 8 1 1 1 128 0 0 TPG_TMA_PARTIALS=1 & pids+=($!)
# wide3tma pulling the gathered walk's shards in fixed slices, one per CTA (the control of --pulls: pull_shards.cuh)
inst wide3fx 0 0 128 256 3 1 1 0 128 0 5 "TPG_TMA_PARTIALS=1 -DTPG_DIAG_PULL_FIXED_SLICES=1" & pids+=($!)
# the shipped ping-pong 128x128 (pp128tma) with deferred flags (pp128tdf) and with spread pushes on top (pp128sp:
# TPG_SPREAD_PUSHES, a pushing tile's stores spread over its warpgroup's wait for its next turn); the ping-pong
# 64x128's (pp64sp); pp128sp recording CTA 0's spread timing once (pp128spd, TPG_DIAG_SPREAD_PRINT); pp128tdf and
# pp128sp with the phase sums (pp128tdq, pp128spq: TPG_DIAG_PHASES, diag_phases.cuh - where a tile's time goes;
# kernel_selftest prints them after each --rs-perf / --rs-far problem); pp128tdq storing every unit as 64
# one-dimensional row stores (pp128tdr, TPG_DIAG_ROW_STORES: timing only, the values land swizzled - its cases fail)
TDF="TPG_TMA_PARTIALS=1 -DTPG_PP_DEFER_FLAGS=1"
inst pp128tdf 0 0 128 128 5 1 1 1 128 0 0 "$TDF" & pids+=($!)
inst pp128sp 0 0 128 128 5 1 1 1 128 0 0 "$TDF -DTPG_SPREAD_PUSHES=1" & pids+=($!)
inst pp64sp 0 0 64 128 8 1 1 1 128 0 0 "$TDF -DTPG_SPREAD_PUSHES=1" & pids+=($!)
inst pp128spd 0 0 128 128 5 1 1 1 128 0 0 "$TDF -DTPG_SPREAD_PUSHES=1 -DTPG_DIAG_SPREAD_PRINT=1" & pids+=($!)
inst pp128tdq 0 0 128 128 5 1 1 1 128 0 0 "$TDF -DTPG_DIAG_PHASES=1" & pids+=($!)
inst pp128spq 0 0 128 128 5 1 1 1 128 0 0 "$TDF -DTPG_SPREAD_PUSHES=1 -DTPG_DIAG_PHASES=1" & pids+=($!)
inst pp128tdr 0 0 128 128 5 1 1 1 128 0 0 "$TDF -DTPG_DIAG_PHASES=1 -DTPG_DIAG_ROW_STORES=1" & pids+=($!)
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" = 0 ] || { echo "FAIL: an instance did not compile"; exit 1; }

# SELFTEST_WARN_ONLY=1 (a build by another toolkit, tests/gpu/nvcc_cuda12.sh): a serialized or spilling instance is
# said, and the build goes on
verdict=$([ "${SELFTEST_WARN_ONLY:-0}" = 1 ] && echo WARN || echo FAIL)
echo "| instance | registers | stack | spill stores | spill loads | C751x |"
echo "|---|---|---|---|---|---|"
for k in "${KERNELS[@]}"; do
    log="$out/ptxas_$k.log"
    regs=$(grep -oE "Used [0-9]+ registers" "$log" | head -1 | grep -oE "[0-9]+")
    stack=$(grep -oE "[0-9]+ bytes stack frame" "$log" | head -1 | grep -oE "^[0-9]+")
    sst=$(grep -oE "[0-9]+ bytes spill stores" "$log" | head -1 | grep -oE "^[0-9]+")
    sld=$(grep -oE "[0-9]+ bytes spill loads" "$log" | head -1 | grep -oE "^[0-9]+")
    c75=$(grep -cE "C751[0-9]" "$log" || true)
    echo "| $k | $regs | $stack | $sst | $sld | $c75 |"
    if [ "$c75" != 0 ]; then
        echo "$verdict: wgmma serialized ($k)"; grep -E "C751" "$log"; [ "$verdict" = WARN ] || exit 1
    fi
    if [ "$sst" != 0 ] || [ "$sld" != 0 ]; then
        echo "$verdict: register spills ($k)"; [ "$verdict" = WARN ] || exit 1
    fi
done

pids=()
for f in kernel_selftest selftest_util selftest_cublas_perf selftest_rs_perf selftest_ce_chain selftest_ag_perf \
    selftest_coresident selftest_pulls; do
    rm -f "$out/$f.o"
    "$NVCC" "${ARCH[@]}" -O3 -std=c++17 "${INC[@]}" -c "$root/tests/gpu/$f.cu" -o "$out/$f.o" & pids+=($!)
done
rm -f "$out/raster.o" "$out/barrier.o"
"$NVCC" "${ARCH[@]}" -O3 -std=c++17 "${INC[@]}" -c "$root/runtime/src/barrier.cu" -o "$out/barrier.o" & pids+=($!) # --coresident
${CC:-cc} -std=c11 -O2 -I "$root/runtime/src" -c "$root/runtime/src/raster.c" -o "$out/raster.o" & pids+=($!) # hilbert order
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" = 0 ] || { echo "FAIL: host test did not compile"; exit 1; }
objs=()
for k in "${KERNELS[@]}"; do objs+=("$out/inst_$k.o"); done
hosts=()
for f in kernel_selftest selftest_util selftest_cublas_perf selftest_rs_perf selftest_ce_chain selftest_ag_perf \
    selftest_coresident selftest_pulls raster barrier; do hosts+=("$out/$f.o"); done
"$NVCC" "${ARCH[@]}" -o "$out/kernel_selftest" "${hosts[@]}" "${objs[@]}" \
    -lcublas
echo "built $out/kernel_selftest"
