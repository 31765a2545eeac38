#!/bin/bash
# One device call (1 GPU, ~4 min): why the promoted fp8 kernel ran 0.683-0.816 of cuBLASLt (sustained, without fast
# accumulation) on an H100's large-K problems (call_torch_capture_e4m3p.sh, 1823Z) where it ran 0.972-0.986 on an
# H200 (2026-12-02). Same call, same problems (405B-fc1, 70B-fc2, 8192^3):
#   1. the local-GEMM benchmark of 959644b (where the 0.976 was measured), gemm_e4m3_promoted_tp1 alone
#      (build/old/local_gemm_959644b, built from that commit here): the code then against now on this chip;
#   2. now: gemm_e4m3_promoted_tp1 beside two experiment tiles, x_p8_c2x1_tp1 (the same tile in CTA pairs sharing B
#      by multicast: half the L2 reads of B) and x_p8_n160_tp1 (128x160, cuBLASLt's tile here: tile id 29);
#   3. fast accumulation: the ping-pong 128x128 and the wide 128x256 on 405B-fc1 (is it the 128x128 tile on this chip?).
# The x_ configs exist at commit b0eec6e only. Carry build/bench/local_gemm and build/old/local_gemm_959644b.
# From the repository root:
#   bash bench/results/experiments/call_fp8_promote_h100.sh
OUT=${OUT:-build/fp8_promote_h100}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
P=405B-fc1,70B-fc2,gemm-8192
run() {  # name, binary, flags...
    local name=$1 bin=$2; shift 2
    timeout 200 "$bin" --out "$R/$name.json" "$@" > "$R/$name.log" 2>&1; at "$name" $?
    grep -E "^\[|^[0-9A-Za-z-]+ +e4m3 " "$R/$name.log" | cut -c1-220
}
run old_959644b build/old/local_gemm_959644b --dtype e4m3 --precise-fp8 --problems $P --configs gemm_e4m3_promoted_tp1 \
    --budget-s 150
run now_tiles build/bench/local_gemm --dtype e4m3 --precise-fp8 --problems $P \
    --configs gemm_e4m3_promoted_tp1,x_p8_c2x1_tp1,x_p8_n160_tp1 --budget-s 180
run fast_tiles build/bench/local_gemm --dtype e4m3 --problems 405B-fc1 --configs gemm_e4m3_tp1,gemm_e4m3_wide_tp1 \
    --budget-s 100
python3 - "$R" <<'PY'
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for r in json.load(open(f)):
        for v in r.get("variants") or []:
            print(f.split("/")[-1][:-5], r["name"], {k: v.get(k) for k in v if k in
                  ("config", "burst_tflops", "sustained_tflops", "joules", "check", "max_error", "error")})
PY
cat "$OUT/summary.txt"
