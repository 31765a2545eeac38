#!/usr/bin/env bash
# x2 call 1 (nvidia-h200-x2, ~560 s; carry build/exp/ce_chain_cost): issue 4's table and the copy-engine question.
#   1. bench/run_tp.sh --tp 2 --alt-copy-engine-partials: issue 4's table (bench/results/tp2.json), each
#      reduce-scatter pick's copy-engine twin beside it on the same tensors ("alt:copy_engine_partials"); 3 rounds,
#      async TP eager and from a CUDA graph, the local GEMM's two modes (~310-340 s: first, so that nothing before it
#      can cut its reduce-scatter shapes)
#   2. the GPU pytest's missing-peer timeout across GPUs (bench/x2/pytest_cases.sh; 12 gpu_timeout runs, ~40-60 s,
#      bounded at 150 s); -rA, so that the log names every case that passed (a step cut by its bound gets SIGINT, on
#      which pytest still prints that summary)
#   3. build/exp/ce_chain_cost (bench/results/experiments/ce_chain_cost.cu): its "peer" rows time the copy nodes the
#      copy-engine partials' chains are made of, device to device - read them first (docs/perf_notes/2026-12-04-f.md)
#   4. the GPU pytest's other cases across GPUs with what is left (the NCCL transport's cases also lead call 3)
# Back in $OUT: summary.txt, tp2.json, tp2_table.md, tp2.png, records.tgz (every log). Then, by bench/x2/README.md:
# the copy engine the default (bench/x2/ce_default.py) and call 4, or not.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
build
tp_run tp 400 --alt-copy-engine-partials
cp "$R"/tp/tp2.json "$R"/tp/tp2.png "$OUT"/ 2>/dev/null
# shellcheck source=pytest_cases.sh
source "$(dirname "$0")/pytest_cases.sh"  # ACROSS, TIMEOUT_CASES
lim=$(limit 150)
if [ "$lim" = 0 ]; then note "gpu pytest: the missing peer's timeout (no time left)" 124; else
    TPG_REQUIRE_GPUS=2 timeout -s INT -k 10 "$lim" python3 -m pytest -q -rA tests/test_gpu.py \
        -k "($ACROSS) and ($TIMEOUT_CASES)" >"$R/gpu_pytest_timeout.log" 2>&1
    note "gpu pytest: the missing peer's timeout" $?
fi
lim=$(limit 60)
if [ "$lim" = 0 ]; then note "ce_chain_cost (no time left)" 124
elif [ -x build/exp/ce_chain_cost ]; then
    timeout -k 10 "$lim" build/exp/ce_chain_cost >"$R/ce_chain_cost.txt" 2>&1
    note ce_chain_cost $?
else
    note "ce_chain_cost (not carried)" 127
fi
left=$(limit 300)
if [ "$left" = 0 ]; then note "gpu pytest (no time left)" 124; else
    TPG_REQUIRE_GPUS=2 timeout -s INT -k 10 "$left" python3 -m pytest -q -rA tests/test_gpu.py \
        -k "($ACROSS) and not ($TIMEOUT_CASES)" >"$R/gpu_pytest.log" 2>&1
    note "gpu pytest (${left} s)" $?
fi
grep -E "^(PASSED|FAILED|ERROR|SKIPPED)" "$R/gpu_pytest_timeout.log" 2>/dev/null
tail -15 "$R/gpu_pytest.log" 2>/dev/null
cat "$OUT/tp2_table.md" 2>/dev/null
[ -f "$OUT/tp2.json" ] && python3 bench/x2/verdict.py "$OUT/tp2.json" | tee "$R/verdict.txt"
cat "$OUT/summary.txt"
