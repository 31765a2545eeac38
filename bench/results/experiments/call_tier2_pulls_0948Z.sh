#!/bin/bash
# One device call (nvidia-h200, 1 GPU): after the gathered walk's GEMM pulls (every kernel has the pull prologue):
# tier 2 at TP = 2 in full with both ranks on the one GPU; then one traced call of a gathered walk at TP = 4 (every
# rank on the GPU) with the GEMM pulling the shards and with copy nodes (build/trace/tpgemm --trace), the trace's
# span of the pulls named for them (trace_format.h `pulls`). Records packed into one file.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
STEP_BUDGET_S=420 timeout 430 tests/gpu/run_tier2.sh --tp 2 --share-device > $OUT/tier2_tp2.log 2>&1
echo "rc=$?" >> $OUT/tier2_tp2.log
T=(--share-device --schedule AllGather1D_TilingCD_RotatingA --tp 4 --m 128 --n 10240 --k 8192 --iterations 20)
timeout 60 build/trace/tpgemm "${T[@]}" --trace $OUT/trace_pulls.json > $OUT/trace_pulls.log 2>&1
timeout 60 build/trace/tpgemm "${T[@]}" --gather-copy-engine --trace $OUT/trace_copy_engine.json \
  > $OUT/trace_copy_engine.log 2>&1
grep -A4 "^group" $OUT/tier2_tp2.log | tail -30; tail -2 $OUT/tier2_tp2.log
for f in pulls copy_engine; do
  echo "== $f"; grep -E "Disposition|Copies|TFLOP|trace" $OUT/trace_$f.log | head -6
  python3 -c "
import json; j = json.load(open('$OUT/trace_$f.json'))
spans = [e for e in j['traceEvents'] if e.get('cat') == 'copy']
for e in spans: print(e['pid'], e['name'], 'dur_us', e['dur'])
print('tile spans', sum(1 for e in j['traceEvents'] if str(e.get('name', '')).startswith('stage')))"
done
cd $OUT && tar czf records.tgz --remove-files *.log *.json gpu.txt && ls -la $OUT
