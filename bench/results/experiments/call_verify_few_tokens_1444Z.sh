#!/bin/bash
# One device call (nvidia-h200, 1 GPU): what the few-token work of 2026-12-02 12:22Z left unrun -
# 1) the self-test cases of the new instances w160 and pp64tma (reference, rings, batches, timeouts);
# 2) the reduce-scatter ring proxy (--rs-perf) of pp64tma beside the shipped pp128tma / wide3tma and the fp32
#    partials' pp128p32; 3) tier 2's variants and tp1 groups at TP = 2 with both ranks on this GPU (the few-token
#    configs on their own shapes, never run); 4) fp16 ping-pong 64x128 against the fp16 defaults at M = 128.
O=/tmp/o; mkdir -p $O
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,utilization.gpu --format=csv,noheader > $O/gpu.log
timeout 150 build/selftest/kernel_selftest --no-perf --only w160,pp64tma > $O/selftest.log 2>&1
echo "selftest rc=$?" >> $O/selftest.log
timeout 120 build/selftest/kernel_selftest --no-perf --no-cases --rs-perf --only pp64tma,pp128tma,wide3tma,pp128p32 \
    > $O/rs_perf.log 2>&1
echo "rs-perf rc=$?" >> $O/rs_perf.log
OUT_SAVE=$OUT
OUT=$O/tier2 TIER2_GROUPS=variants,tp1 timeout 200 tests/gpu/run_tier2.sh --tp 2 --share-device > $O/tier2.log 2>&1
echo "tier2 rc=$?" >> $O/tier2.log
OUT=$OUT_SAVE
cp $O/tier2/tier2*.json $OUT/ 2>/dev/null
timeout 100 build/bench/local_gemm --dtype fp16 --configs ag_rota_fp16_tp1,ag_rota_fp16_wide_tp1,ag_rota_fp16_pp64_tp1 \
    --problems 70B-qkv-m128,70B-o-m128 --budget-s 60 --out $OUT/local_gemm_pp64_fp16.json > $O/pp64_fp16.log 2>&1
echo "local_gemm rc=$?" >> $O/pp64_fp16.log
cat $O/gpu.log $O/selftest.log $O/rs_perf.log $O/tier2.log $O/pp64_fp16.log > $OUT/call.log
cat $O/gpu.log; grep -i "fail\|passed\|rc=" $O/selftest.log | tail -5; tail -25 $O/rs_perf.log; tail -15 $O/tier2.log
tail -8 $O/pp64_fp16.log
