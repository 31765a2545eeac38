#!/bin/bash
# One device call (nvidia-h200, 1 GPU), the tree of 2304Z: Nsight Compute warp-stall samples per SASS instruction
# (sampling every 32 cycles) of one launch each - the ping-pong 64x128 at one tile (16 x 128 x 64: where a call's
# ~2 us of fixed cost sits) and the stream-K 64x128 at 16 x 2048 x 4096 (its contribution -> count -> fix-up chain).
# The reports' source pages (SASS, samples and stall reasons per line) come back as CSV; the committed records keep the
# lines with samples (bench/results/experiments/README.md).
. bench/results/experiments/decode_call_lib.sh
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
prof() { # NAME CONFIG M N K
  timeout 120 $NCU --clock-control none --cache-control none -k regex:gemm_sm90 --launch-skip 5 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section LaunchStats --warp-sampling-interval 0 \
    --import-source no \
    -o "$R/$1" build/tpgemm --config "$2" --tp 1 --devices 0 --m "$3" --n "$4" --k "$5" --iterations 8 \
    > "$R/$1.log" 2>&1; echo "ncu $1 rc=$?"
  $NCU -i "$R/$1.ncu-rep" --page source --csv --print-source sass > "$R/$1_sass.csv" 2>/dev/null
  $NCU -i "$R/$1.ncu-rep" --page details > "$R/$1_details.txt" 2>/dev/null
  rm -f "$R/$1.ncu-rep"; wc -l "$R/$1_sass.csv"
}
prof pp64_one ag_rota_bf16_pp64_tp1 16 128 64
prof sk64_16 ag_rota_bf16_sk64_tp1 16 2048 4096
grep -E 'Duration|Warp Cycles Per Issued|Registers|Waves' "$R"/*_details.txt | head -20
pack
