#!/bin/bash
# One device call (1 GPU, ~8 min): the promoting fp8 kernel as a cooperative 128x160 (was 128x128; on an H100 the
# experiment tile ran 0.99 / 0.93 of cuBLASLt's promoting kernels sustained on 405B-fc1 / 70B-fc2 where the 128x128 ran
# 0.70 / 0.81: call_fp8_promote_h100.sh). Steps:
#   1. kernel self-test cases of e4m3p8 / e4m3p8tma (now the shipped 128x160 and its _rs twin) and e4m3p1;
#   2. the local-GEMM benchmark, --precise-fp8, all ten problems (BENCHMARKS.md's promoted table; the 128x128 runs
#      beside it as x_p8_128_tp1 at commit afa517c, removed since; never the published pick);
#   3. the CLI's reference check of the four *_e4m3_promoted families, every rank on the one GPU, at TP = 2 / 4 / 8
#      on tier 2's variant shapes (N per stage not a multiple of 160: edge tiles).
# Carry build/selftest/kernel_selftest, build/bench/local_gemm and build/tpgemm. From the repository root:
#   bash bench/results/experiments/call_fp8_promote_160.sh
OUT=${OUT:-build/fp8_promote_160}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 120 build/selftest/kernel_selftest --no-perf --only e4m3p8,e4m3p8tma,e4m3p1 > "$R/selftest.log" 2>&1
at "selftest e4m3p8,e4m3p8tma,e4m3p1" $?
grep -E "PASS|FAIL" "$R/selftest.log" | tail -4 | cut -c1-200
j=$OUT/local_gemm_e4m3p.json
timeout 330 build/bench/local_gemm --dtype e4m3 --precise-fp8 --budget-s 300 --out "$j" > "$R/local_gemm_e4m3p.log" 2>&1
at "local_gemm --dtype e4m3 --precise-fp8" $?
python3 bench/report.py "$j" --markdown "${j%.json}.md" --png "${j%.json}.png" > "$R/report.log" 2>&1; at report $?
tail -13 "$R/local_gemm_e4m3p.log"
python3 -c "import json, sys
for r in json.load(open(sys.argv[1])):
    print(r['name'], r['config'], r['check'], r['max_error'], ' '.join('%s %s/%s J %s' % (v['config'],
          v['burst_tflops'], v['sustained_tflops'], v['joules']) for v in r['variants']))" "$j" | cut -c1-250
end=$(( $(date +%s) + 150 )); runs=0; bad=0
for tp in 2 4 8; do
    for f in ag_rota ag_rotb rs_tila rs_tilb; do
        for shape in "16384 10240 8192" "16384 8192 8192" "8192 4096 4096" "512 1024 256"; do
            [ "$(date +%s)" -lt "$end" ] || break 3
            read -r m n k <<<"$shape"  # n is the shape's N (the 1842Z call counted runs in n too: 1025)
            timeout 40 build/tpgemm --share-device --tp $tp --config ${f}_e4m3_promoted_tp$tp --m $m --n $n --k $k \
                --iterations 3 >> "$R/cli_checks.log" 2>&1
            rc=$?; runs=$((runs + 1)); [ $rc = 0 ] || { bad=$((bad + 1)); echo "FAILED rc $rc: tp $tp $f $shape"; }
        done
    done
done
at "CLI checks: $runs runs, $bad failed" $bad
cat "$OUT/summary.txt"
