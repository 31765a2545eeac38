#!/usr/bin/env bash
# x2 call 3 (nvidia-h200-x2, ~540 s): the NCCL transport's GPU pytest cases across GPUs first (its kernels beside the
# persistent GEMM over NVLink: 4-8 channels a peer, unclustered since 2026-12-05-j), then the other experiments on the
# anchors, each an extra variant on the same tensors (bench/run_tp.sh --tag alts: tp2_alts.json): the links' cost
# beside the local GEMM (diag:local_link), the barriers
# beside the GEMM, pulled partials, the call captured in a CUDA graph, the NCCL transport - of the shipped defaults,
# pushing or, after call 4, by copy engine; then the 70B-o ring, pushing (run_trace.sh takes the `_push` twin where
# the default moves its partials another way), traced next to its local GEMM: do the pushing tiles' mainloops grow
# across GPUs? - and by copy engine (its bands timed by CUDA events: do they run on a copy engine, and keep up?)
# Back in $OUT: summary.txt, tp2_alts.json, tp2_alts_table.md, records.tgz (traces and logs).
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
# shellcheck source=pytest_cases.sh
source "$(dirname "$0")/pytest_cases.sh"  # ACROSS, NCCL_CASES
build
lim=$(limit 120)
if [ "$lim" = 0 ]; then note "gpu pytest: the NCCL transport (no time left)" 124; else
    TPG_REQUIRE_GPUS=2 timeout -s INT -k 10 "$lim" python3 -m pytest -q -rA tests/test_gpu.py \
        -k "($ACROSS) and ($NCCL_CASES)" >"$R/gpu_pytest_nccl.log" 2>&1
    note "gpu pytest: the NCCL transport" $?
fi
tp_run alts 360 --rounds 2 --tag alts --link-copies --alt-overlap-barriers --alt-pull-partials --alt-captured --alt-nccl
cp "$R"/alts/tp2_alts.json "$OUT"/ 2>/dev/null
left=$(limit 150)
if [ "$left" = 0 ]; then note "run_trace (no time left)" 124; else
    OUT="$R/trace" timeout -k 10 "$left" bash bench/run_trace.sh 16384 8192 8192 >"$R/trace.log" 2>&1
    note run_trace $?
fi
grep -E "^(PASSED|FAILED|ERROR)" "$R/gpu_pytest_nccl.log" 2>/dev/null
cat "$OUT/tp2_alts_table.md" "$R/trace.log" 2>/dev/null | tail -60
cat "$OUT/summary.txt"
