#!/bin/bash
# One device call (nvidia-h200, 1 GPU): first look at compute-sanitizer's racecheck, synccheck and initcheck on
# every shipped TP = 1 kernel (one config per kernel binary, 512x1024x256 with beta = 1 so C is read), racecheck on
# the kernel self-test's ring cases (the reduce-scatter partial paths, TMA-loaded partials included, in one
# kernel on one GPU), and the NCCL communicator's CTA cap (ncclCommInitRankConfig, maxCTAs 8) in NCCL's own log.
source "$(dirname "$0")/nccl_call_common.sh"
export PATH="$PATH:/usr/local/cuda/bin"
compute-sanitizer --version | tee -a "$OUT/env.txt"
# one TP = 1 config per kernel binary
build/tpgemm --list | awk 'NR > 1 && $3 == 1 && !seen[$7]++ {print $1}' > "$OUT/tp1_configs.txt"
san() { # tool config
    local tool=$1 cfg=$2 extra=()
    [ "$tool" = racecheck ] && extra=(--racecheck-report all)
    local t0=$(date +%s)
    if [ $((t0 - START)) -gt 400 ]; then echo "$tool $cfg not run (call budget)"; return; fi
    timeout 120 compute-sanitizer --tool "$tool" "${extra[@]}" --print-limit 30 --error-exitcode 99 \
        --log-file "$OUT/san_${tool}_$cfg.log" build/tpgemm --config "$cfg" --devices 0 --m 512 --n 1024 --k 256 \
        --beta 1 --iterations 1 --warmup-iterations 1 --timeout-ms 120000 --json > "$OUT/san_${tool}_$cfg.out" 2>&1
    local rc=$?
    echo "$tool $cfg rc=$rc $(( $(date +%s) - t0 ))s $(grep -ho 'ERROR SUMMARY: [0-9]* error[s]*\|RACECHECK SUMMARY: [0-9]* hazard[s]* displayed ([0-9]* error[s]*, [0-9]* warning[s]*)' "$OUT/san_${tool}_$cfg.log" | tr '\n' ' ') check=$(grep -o '"check": *"[a-z]*"' "$OUT/san_${tool}_$cfg.out" | head -1)"
}
START=$(date +%s)
export -f san; export OUT START
# the NCCL check first (a few seconds), then the sanitizers six at a time, the self-test's rings beside them
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV step nccl_config_tp2 150 build/tests/gpu_epochs 2 --share-device --processes --nccl
grep -h 'Max CTAs\|p2p channels\|maxCTAs\|NCCL version' "$OUT/nccl_config_tp2.log" | sort | uniq -c | head -20 | tee "$OUT/nccl_config_grep.txt"
( timeout 400 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 30 --error-exitcode 99 \
    --log-file "$OUT/san_racecheck_selftest.log" build/selftest/kernel_selftest --no-perf --only wide3tma,pp128tma \
    > "$OUT/san_racecheck_selftest.out" 2>&1; echo "racecheck selftest rc=$?" > "$OUT/selftest_rc.txt" ) &
for tool in racecheck synccheck initcheck; do for c in $(cat "$OUT/tp1_configs.txt"); do echo "$tool $c"; done; done |
    xargs -P 6 -L 1 bash -c 'san "$0" "$1"' | sort | tee "$OUT/san_summary.txt"
wait
cat "$OUT/selftest_rc.txt"; tail -5 "$OUT/san_racecheck_selftest.out"; grep -h 'SUMMARY' "$OUT/san_racecheck_selftest.log"
cd "$OUT" && tar czf /tmp/san.tgz *.log *.out *.txt && rm -f *.log *.out && mv /tmp/san.tgz . 
echo; cat "$OUT/nccl_config_grep.txt"; cat "$OUT/san_summary.txt"
