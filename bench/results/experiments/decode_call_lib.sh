#!/bin/bash
# Shared steps of the decode device calls (call_split_rule_1740Z.sh, call_sk_*_18*Z.sh, call_sk_*_19*Z.sh), sourced
# by them: each step writes under $R and prints one status line and a short tail. Run from the repository root on the
# device.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r
mkdir -p "$R"

# tier2 TP GROUPS SECONDS: tier 2's GROUPS at TP with every rank on the GPU (results in $R/tTP/).
tier2() {
  OUT=$R/t$1 TIER2_GROUPS=$2 timeout "$3" tests/gpu/run_tier2.sh --tp "$1" --share-device > "$R/tier2_tp$1.log" 2>&1
  echo "tier2 tp$1 rc=$?"; tail -4 "$R/tier2_tp$1.log"
}

# grid SECONDS CONFIGS [MS:NS:KS]: the decode grid (decode_grid.py) into $R/decode_grid.json.
grid() {
  timeout "$1" python3 bench/results/experiments/decode_grid.py "$R/decode_grid.json" "${@:2}" > "$R/decode_grid.log" 2>&1
  echo "decode_grid rc=$?"; grep -c "CHECK FAILED" "$R/decode_grid.log"
}

# trace NAME TPGEMM-ARGS...: one trace-build run at TP = 1, its timeline summary in $R/NAME.txt.
trace() {
  local name=$1; shift
  timeout 60 build/trace/tpgemm --tp 1 --devices 0 "$@" --iterations 20 --trace "$R/$name.json" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(grep -E '^Avg runtime' "$R/$name.log")"
  python3 bench/timeline.py "$R/$name.json" > "$R/$name.txt" 2>&1
}

# local_decode: local_gemm --decode, the ping-pong and stream-K 64x128 and the wide kernel against cuBLASLt.
local_decode() {
  OUT=$R/decode timeout 310 bench/run_local_gemm.sh --dtype bf16 --aa --budget-s 285 --decode \
    --configs ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1 > "$R/decode.log" 2>&1
  echo "decode rc=$?"; tail -12 "$R/decode/local_gemm.log"
}

# memcheck SHAPE...: compute-sanitizer memcheck of the stream-K 64x128 at TP = 1 on each MxNxK (L = 2, beta 1).
memcheck() {
  local s m n k
  for s in "$@"; do
    IFS=x read -r m n k <<< "$s"
    timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 build/tpgemm --config ag_rota_bf16_sk64_tp1 \
      --tp 1 --devices 0 --m "$m" --n "$n" --k "$k" --l 2 --beta 1 --warmup-iterations 1 --iterations 2 \
      > "$R/memcheck_$s.log" 2>&1
    echo "memcheck $s rc=$? $(grep -E 'ERROR SUMMARY' "$R/memcheck_$s.log" | head -1)"
  done
}

# cli_checks CONFIGS SHAPE...: build/tpgemm's reference check and bitwise determinism of each config (comma list) at
# TP = 1 on each MxNxK (L = 2, alpha 0.5, beta 1).
cli_checks() {
  local c s m n k
  for c in ${1//,/ }; do
    for s in "${@:2}"; do
      IFS=x read -r m n k <<< "$s"
      timeout 60 build/tpgemm --config "$c" --tp 1 --devices 0 --m "$m" --n "$n" --k "$k" --l 2 --alpha 0.5 --beta 1 \
        --iterations 5 > "$R/cli_${c}_$s.log" 2>&1
      echo "cli $c $s rc=$? $(grep -E 'Disposition' "$R/cli_${c}_$s.log" | head -1)"
    done
  done
}

# stalls NAME CONFIG M N K: warp-stall samples per SASS line of one launch (Nsight Compute) into $R/NAME_sass.csv.
stalls() {
  local NCU
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  timeout 120 $NCU --clock-control none --cache-control none -k regex:gemm_sm90 --launch-skip 5 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --warp-sampling-interval 0 --import-source no -o "$R/$1" \
    build/tpgemm --config "$2" --tp 1 --devices 0 --m "$3" --n "$4" --k "$5" --iterations 8 \
    > "$R/$1.log" 2>&1; echo "ncu rc=$?"
  $NCU -i "$R/$1.ncu-rep" --page source --csv --print-source sass > "$R/$1_sass.csv" 2>/dev/null
  rm -f "$R/$1.ncu-rep"
}

# pack: the records into $OUT/records.tgz (what comes back from the device).
pack() { cd "$OUT" && tar czf records.tgz r && rm -rf r; }
