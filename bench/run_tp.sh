#!/usr/bin/env bash
# The TP benchmark on the device machine: builds libtpgemm.so, runs bench/tp_bench.py with one process
# per GPU (torchrun), keeps the logs in $OUT and prints the table last.
#   bench/run_tp.sh [--tp N] [tp_bench.py args...]     (N defaults to every visible GPU)
#   bench/run_tp.sh --tp 2 --share-device ...            (smoke run of the multi-process path on one GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
TP=$(nvidia-smi -L | wc -l)
if [[ "${1:-}" == "--tp" ]]; then TP=$2; shift 2; fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# No worker may outlive this script: when an outer `timeout` stopped it once, the inner timeout's own
# process group kept two workers queueing GEMMs on both GPUs, and the next run measured half speed.
cleanup() { pkill -TERM -f "bench/tp_bench.py" 2>/dev/null || true; }
trap cleanup EXIT
trap 'cleanup; exit 143' TERM INT
{ nvidia-smi -L; nvidia-smi; nvidia-smi topo -m; } > "$OUT/tp${TP}_gpus.log" 2>&1 || true
ninja build/libtpgemm.so > "$OUT/tp${TP}_build.log" 2>&1 || { tail -40 "$OUT/tp${TP}_build.log"; exit 1; }
status=0
OUT="$OUT" timeout 480 python3 -m torch.distributed.run --standalone --nproc_per_node="$TP" bench/tp_bench.py "$@" \
    > "$OUT/tp${TP}_run.log" 2>&1 || status=$?
tail -60 "$OUT/tp${TP}_run.log"
[[ $status -eq 124 ]] && echo "run_tp.sh: the benchmark ran past 480 s and was stopped" >&2
# the run's JSON: tp<N>.json for bf16, tp<N>_<dtype>.json otherwise, _m<M> with --tokens (bench/tp_records.py
# result_stem)
DTYPE=bf16 SHARED= TOKENS=
for ((i = 1; i <= $#; i++)); do
    case "${!i}" in
    --dtype=*) DTYPE="${!i#--dtype=}" ;;
    --dtype) j=$((i + 1)); [[ $j -le $# ]] && DTYPE="${!j}" ;;
    --share-device) SHARED=_shared ;;
    --tokens=*) TOKENS="_m${!i#--tokens=}" ;;
    --tokens) j=$((i + 1)); [[ $j -le $# ]] && TOKENS="_m${!j}" ;;
    esac
done
[[ "$TOKENS" =~ ^_m[0-9]+$ ]] && TOKENS="_m$((10#${TOKENS#_m}))" # as tp_bench.py writes it: 02048 -> 2048
[[ "$TOKENS" == _m0 ]] && TOKENS= # --tokens 0: the shapes' own M
STEM="tp${TP}"; [[ "$DTYPE" == bf16 ]] || STEM="tp${TP}_${DTYPE}"; STEM="$STEM$TOKENS$SHARED"
if [[ -f "$OUT/$STEM.json" ]]; then
    python3 bench/report_tp.py "$OUT/$STEM.json" --benchmarks "$OUT/BENCHMARKS.md" > "$OUT/${STEM}_table.md"
    echo; cat "$OUT/${STEM}_table.md"
fi
exit $status
