#!/usr/bin/env bash
# The TP benchmark on the device machine: builds libtpgemm.so, runs bench/tp_bench.py with one process
# per GPU (torchrun), keeps the logs in $OUT and prints the table last.
#   bench/run_tp.sh [--tp N] [tp_bench.py args...]     (N defaults to every visible GPU; --tp may come anywhere)
#   bench/run_tp.sh --tp 2 --share-device ...            (smoke run of the multi-process path on one GPU)
# N is a TP degree the benchmark runs at, 1, 2, 4 or 8 (tp_options.TP_DEGREES: the degrees of its schedules' configs);
# tp_bench.py's own options: python3 bench/tp_bench.py --help
set -euo pipefail
# before anything runs: on a GPU machine the rest builds the library and starts a benchmark on every GPU
for arg in "$@"; do
    case "$arg" in -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;; esac
done
cd "$(dirname "$0")/.."
# --tp N (or --tp=N) anywhere among the arguments; the rest go to tp_bench.py as given
TP=""
TP_GIVEN=0
ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
    --tp) [ $# -ge 2 ] || { echo "run_tp.sh: --tp needs a value" >&2; exit 2; }; TP=$2; TP_GIVEN=1; shift 2 ;;
    --tp=*) TP=${1#--tp=}; TP_GIVEN=1; shift ;;
    *) ARGS+=("$1"); shift ;;
    esac
done
# tp_options.TP_DEGREES (tests/test_run_tp.py holds them equal): another degree would build and start torchrun, whose
# every rank then refuses its WORLD_SIZE
TP_DEGREES="1 2 4 8"
is_tp_degree() { [[ " $TP_DEGREES " == *" $1 "* ]]; }
if [ "$TP_GIVEN" = 1 ] && ! is_tp_degree "$TP"; then
    echo "run_tp.sh: --tp '$TP': a TP degree of ${TP_DEGREES// /, }, or no --tp for every visible GPU" >&2
    exit 2
fi
if [ "$TP_GIVEN" = 0 ]; then
    TP=$(nvidia-smi -L 2>/dev/null | wc -l) || TP=0
    if ! is_tp_degree "$TP"; then
        echo "run_tp.sh: $TP GPUs visible (nvidia-smi -L): name a TP degree of ${TP_DEGREES// /, } with --tp" >&2
        exit 2
    fi
fi
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
set -- ${ARGS[@]+"${ARGS[@]}"}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# No worker may outlive this script: when an outer `timeout` stopped it once, the inner timeout's own
# process group kept two workers queueing GEMMs on both GPUs, and the next run measured half speed. Only this run's
# processes are ended (another benchmark on the machine is not ours): they carry TP_BENCH_RUN_ID in their environment,
# which torchrun passes to its workers - a process group would not do, as the workers start sessions of their own
# and outlive a killed torchrun as orphans.
RUN_ID="$$-$(date +%s%N)"
run_pids() { grep -slzx "TP_BENCH_RUN_ID=$RUN_ID" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true; }
cleanup() {
    local pids tries=0
    pids=$(run_pids)
    [ -n "$pids" ] || return 0
    kill -TERM $pids 2>/dev/null || true
    while [ -n "$(run_pids)" ] && [ $tries -lt 50 ]; do sleep 0.1; tries=$((tries + 1)); done
    pids=$(run_pids)
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
}
trap cleanup EXIT
trap 'cleanup; exit 143' TERM INT
# Logs go to tp<N>_*.log while the run lasts, then take the run's stem (tp_bench.py writes it to $OUT/.tp_stem:
# tp_records.result_stem), so that the runs of one call - two dtypes, three token counts - keep their own.
rm -f "$OUT/.tp_stem"
{ nvidia-smi -L; nvidia-smi; nvidia-smi topo -m; } > "$OUT/tp${TP}_gpus.log" 2>&1 || true
ninja build/libtpgemm.so > "$OUT/tp${TP}_build.log" 2>&1 || { tail -40 "$OUT/tp${TP}_build.log"; exit 1; }
status=0
# the benchmark's bound (TP_BENCH_TIMEOUT_S, default 480 s): a device call that runs two benchmarks gives each its
# share of the call's 600 s, so that the call's own collecting still runs
LIMIT=${TP_BENCH_TIMEOUT_S:-480}
# under run_all.sh its step's cap (STEP_BUDGET_S) less 20 s, so that the table of the shapes done is still written
[ -z "${TP_BENCH_TIMEOUT_S:-}" ] && [ -n "${STEP_BUDGET_S:-}" ] && LIMIT=$((STEP_BUDGET_S - 20))
# in the background, waited for: bash runs a trap only after the foreground command ends, and `wait` returns at once
TP_BENCH_RUN_ID="$RUN_ID" OUT="$OUT" timeout -k 10 "$LIMIT" \
    python3 -m torch.distributed.run --standalone --nproc_per_node="$TP" bench/tp_bench.py "$@" \
    < /dev/null > "$OUT/tp${TP}_run.log" 2>&1 &
wait $! || status=$?
tail -60 "$OUT/tp${TP}_run.log"
[[ $status -eq 124 ]] && echo "run_tp.sh: the benchmark ran past $LIMIT s and was stopped" >&2
if [[ ! -f "$OUT/.tp_stem" ]]; then
    echo "run_tp.sh: the benchmark stopped before naming its results (logs: $OUT/tp${TP}_run.log)" >&2
    exit $((status ? status : 1))
fi
STEM=$(<"$OUT/.tp_stem")
if [[ "$STEM" != "tp$TP" ]]; then
    for log in run gpus build; do mv -f "$OUT/tp${TP}_$log.log" "$OUT/${STEM}_$log.log"; done
fi
# only a JSON this run wrote (after every shape): an older one of the same stem would read as this run's table
if [[ "$OUT/$STEM.json" -nt "$OUT/.tp_stem" ]]; then
    python3 bench/report_tp.py "$OUT/$STEM.json" --benchmarks "$OUT/BENCHMARKS.md" > "$OUT/${STEM}_table.md"
    echo; cat "$OUT/${STEM}_table.md"
else
    echo "run_tp.sh: no shape of this run finished: no $STEM table (logs: $OUT/${STEM}_run.log)" >&2
    [[ $status -eq 0 ]] && status=1
fi
exit $status
