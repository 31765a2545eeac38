#!/usr/bin/env bash
# compute-sanitizer's racecheck, synccheck and initcheck on the GEMM kernels (memcheck runs in run_tier2.sh).
#
# Usage: tests/gpu/run_sanitizers.sh [--tp N] [--share-device] [--jobs J] [--commit-results]
# Groups (records like tier2.json; a run passes when its tool is clean and, for build/tpgemm, the reference
# check passed; racecheck is clean when it displays no hazard, the others at "ERROR SUMMARY: 0 errors"):
#   canary  build/tests/gpu_racecheck_canary: racecheck must report the thread-to-thread race and stay clean on
#           every correct hand-off, synccheck must report a warp barrier with a bad mask - else a clean kernel below
#           means nothing. Whether racecheck sees the async-proxy hand-offs is recorded as "coverage", never failed;
#           read the kernels' clean results with it. On the device's compute-sanitizer (2026-12-02 08:16Z) it reports
#           a bulk load the warps read before its mbarrier completed (the ring slots, TMA-loaded partials) but not
#           a bulk store of smem the warps had not finished writing (the epilogue's TMA stores: that hand-off rests
#           on the reference check and determinism of tier 2 alone).
#   tp1     every kernel binary that has a TP = 1 config (17 of the 24 shipped: the others read reduce-scatter
#           partials, below), through its first one (build/tpgemm --list), 512x1024x256 with beta 1 (C read), under
#           each of the three tools
#   rings   (build/selftest/kernel_selftest: tests/gpu/kernel_selftest.sh; carry it, run_all.sh does not build it;
#           without it the group is a failed record unless SAN_SKIP_RINGS=1 says to leave it out) the self-test's
#           instances of the shipped partial-reading kernels under racecheck: rings of stages in one kernel on one
#           GPU, the partial hand-offs of TP >= 2 (TMA-loaded and fp32 partials) included
#   tpN     (N GPUs, not with --share-device: a sanitizer serializes launches, ranks on one GPU would wait for
#           each other) each schedule's two bf16 configs (ping-pong and wide) at TP = N under racecheck and synccheck
# Runs go J at a time (default 6; a racecheck run of a small GEMM takes ~15 s, mostly instrumentation on the host);
# RUN_TIMEOUT (150 s) bounds one run, SAN_BUDGET_S (300) when the last may start, SAN_HARD_S (360) when all end. A
# run that left no record, or an empty group, fails the script.
# Output: $OUT/sanitizers.json (OUT defaults to build/sanitizers) and a summary; exit 0 if every run passed.
set -u -o pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/cuda/bin"

TP=2
SHARE=0
JOBS=6
COMMIT=0
while [ $# -gt 0 ]; do
    case "$1" in
    --tp) shift; TP="${1:-}" ;;
    --share-device) SHARE=1 ;;
    --jobs) shift; JOBS="${1:-}" ;;
    --commit-results) COMMIT=1 ;;
    *) echo "run_sanitizers.sh: unknown argument '$1' (use --tp N, --share-device, --jobs J, --commit-results)" >&2
       exit 2 ;;
    esac
    shift
done
case "$TP" in 2 | 4 | 8) ;; *) echo "run_sanitizers.sh: --tp must be 2, 4 or 8, got '$TP'" >&2; exit 2 ;; esac
if ! [[ "$JOBS" =~ ^[1-9][0-9]*$ ]]; then
    echo "run_sanitizers.sh: --jobs must be a whole number >= 1, got '$JOBS'" >&2
    exit 2
fi
command -v compute-sanitizer >/dev/null || { echo "run_sanitizers.sh: compute-sanitizer not on PATH" >&2; exit 1; }
export OUT="${OUT:-$PWD/build/sanitizers}"
TPGEMM="${TPGEMM:-build/tpgemm}"
CANARY=build/tests/gpu_racecheck_canary
SELFTEST=build/selftest/kernel_selftest
ninja "$TPGEMM" "$CANARY" >/dev/null || { echo "run_sanitizers.sh: $TPGEMM or $CANARY does not build" >&2; exit 1; }
mkdir -p "$OUT/runs"
rm -f "$OUT"/runs/* "$OUT/sanitizers.json"
export RUN_TIMEOUT="${RUN_TIMEOUT:-150}"          # one run (racecheck of a self-test ring: ~40 s)
START=$(date +%s)
# no run starts after SAN_BUDGET_S, and each ends by SAN_HARD_S, so that the JSON is written before a caller's
# own limit stops the script: under run_all.sh (STEP_BUDGET_S, its step's cap) 60 s and 15 s before that cap
if [ -n "${STEP_BUDGET_S:-}" ]; then
    SAN_BUDGET_S="${SAN_BUDGET_S:-$((STEP_BUDGET_S - 60))}" SAN_HARD_S="${SAN_HARD_S:-$((STEP_BUDGET_S - 15))}"
fi
export SAN_BUDGET_END=$((START + ${SAN_BUDGET_S:-300})) SAN_HARD_END=$((START + ${SAN_HARD_S:-360}))

# job GROUP LABEL TOOL EXPECT KIND ARGS...: one run under `compute-sanitizer --tool TOOL`, recorded by
# tier2_collect.py (KIND json: build/tpgemm --json output; plain: exit status only). EXPECT: clean, reported, coverage.
job() {
    local group=$1 label=$2 tool=$3 expect=$4 kind=$5 name t0 rc extra=()
    shift 5
    name="$OUT/runs/${group}_${tool}_${label//[^A-Za-z0-9_.-]/_}"
    [ "$tool" = racecheck ] && extra=(--racecheck-report all)
    local cmd=(compute-sanitizer --tool "$tool" "${extra[@]}" --print-limit 20 --error-exitcode 99 --log-file "$name.san"
               "$@")
    local now limit
    now=$(date +%s)
    limit=$((SAN_HARD_END - now))
    [ "$limit" -gt "$RUN_TIMEOUT" ] && limit=$RUN_TIMEOUT
    if [ "$now" -gt "$SAN_BUDGET_END" ] || [ "$limit" -lt 5 ]; then
        echo "not run: the time budget of run_sanitizers.sh (SAN_BUDGET_S / SAN_HARD_S) was spent" >"$name.err"
        : >"$name.out"
        python3 tests/gpu/tier2_collect.py add "$name.jsonl" "$group" "$tool/$label" 125 0 "$name.out" "$name.err" \
            --kind plain -- "${cmd[@]}"
        return
    fi
    t0=$(date +%s.%N)
    # in the background with its pid noted: `timeout` makes a process group of its own, which a TERM to this
    # script's group does not reach; the script's trap ends each noted group
    timeout "$limit" "${cmd[@]}" >"$name.out" 2>"$name.err" &
    echo $! >"$name.pid"
    wait $!
    rc=$?
    rm -f "$name.pid"
    python3 tests/gpu/tier2_collect.py add "$name.jsonl" "$group" "$tool/$label" "$rc" \
        "$(awk "BEGIN{print $(date +%s.%N) - $t0}")" "$name.out" "$name.err" "$name.san" --expect "$expect" \
        --kind "$kind" -- "${cmd[@]}"
}
export -f job

SMALL=(--m 512 --n 1024 --k 256 --beta 1 --iterations 1 --warmup-iterations 1 --timeout-ms 120000 --json)
{
    # first the TP = N group (both bf16 kernels of each schedule, by name: the small shape's pick is ping-pong), so
    # that a call short of time cuts the one-GPU runs, which the --share-device rehearsal also runs
    if [ "$SHARE" = 0 ]; then
        "$TPGEMM" --list | awk -v t="$TP" 'NR > 1 && $3 == t && $1 ~ /^(ag|rs)_rot[ab]_bf16(_wide)?_tp|^rs_til[ab]_bf16(_wide)?_tp/ {print $1}' |
            while read -r cfg; do
                for tool in racecheck synccheck; do # (their wait bound 60 s: several runs time-slice every GPU;
                    # read a TIMEOUT of this group that way first)
                    echo "tp$TP $cfg $tool clean json $TPGEMM --config $cfg ${SMALL[*]} --timeout-ms 60000"
                done
            done
    fi
    for form in thread_ok store_ok load_ok; do echo "canary $form racecheck clean plain $CANARY $form"; done
    echo "canary thread_race racecheck reported plain $CANARY thread_race"
    for form in store_race load_race; do echo "canary $form racecheck coverage plain $CANARY $form"; done
    echo "canary warp_mask synccheck reported plain $CANARY warp_mask"
    echo "canary thread_ok synccheck clean plain $CANARY thread_ok"
    # tp1: one config per kernel binary (column 7 of --list)
    # (across GPUs spread over GPUs 0..TP-1, while the TP = N runs share them)
    i=0
    "$TPGEMM" --list | awk 'NR > 1 && $3 == 1 && !seen[$7]++ {print $1}' | while read -r cfg; do
        dev=$([ "$SHARE" = 0 ] && echo $((i % TP)) || echo 0)
        i=$((i + 1))
        for tool in racecheck synccheck initcheck; do
            echo "tp1 $cfg $tool clean json $TPGEMM --config $cfg --devices $dev ${SMALL[*]}"
        done
    done
    if [ -x "$SELFTEST" ]; then
        for inst in wide3tma fp16tma pp128tma e4m3tma e4m3pptma e4m3p8tma pp128p32 wide3p32 pp64tma; do
            echo "rings $inst racecheck clean plain $SELFTEST --no-perf --only $inst"
        done
    else
        why="a failure: SAN_SKIP_RINGS=1 leaves it out"
        [ "${SAN_SKIP_RINGS:-0}" != 0 ] && why="SAN_SKIP_RINGS set"
        echo "run_sanitizers.sh: $SELFTEST not built (tests/gpu/kernel_selftest.sh): no rings group ($why)" >&2
    fi
} >"$OUT/jobs.txt"

stop_runs() {
    local f
    for f in "$OUT"/runs/*.pid; do [ -f "$f" ] && kill -TERM -- -"$(cat "$f")" 2>/dev/null; done
}
trap 'kill -TERM "$XARGS_PID" 2>/dev/null; stop_runs; exit 143' TERM INT
echo "== sanitizers on: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd, -), $(wc -l <"$OUT/jobs.txt") runs, $JOBS at a time"
xargs -P "$JOBS" -L 1 bash -c 'job "$@"' _ <"$OUT/jobs.txt" &
XARGS_PID=$!
wait "$XARGS_PID" # (a wait, unlike a foreground command, lets the trap run at once)
echo "== elapsed: $(($(date +%s) - START)) s"
# a run that left no record, or a group that planned nothing (a failed --list, drifted names), fails the script
lost() { # why
    echo "$1" >"$OUT/runs/lost.err"
    : >"$OUT/runs/lost.out"
    python3 tests/gpu/tier2_collect.py add "$OUT/runs/zz_lost.jsonl" plan "$1" 1 0 "$OUT/runs/lost.out" \
        "$OUT/runs/lost.err" --kind plain -- run_sanitizers.sh
}
planned=$(wc -l <"$OUT/jobs.txt")
recorded=$(cat "$OUT"/runs/*.jsonl 2>/dev/null | wc -l)
[ "$recorded" -lt "$planned" ] && lost "$((planned - recorded)) of $planned planned runs left no record"
grep -q '^tp1 ' "$OUT/jobs.txt" || lost "no tp1 run planned (build/tpgemm --list?)"
[ "${SAN_SKIP_RINGS:-0}" != 0 ] || grep -q '^rings ' "$OUT/jobs.txt" ||
    lost "no rings run planned ($SELFTEST not built: tests/gpu/kernel_selftest.sh; SAN_SKIP_RINGS=1 leaves it out)"
[ "$SHARE" = 1 ] || grep -q "^tp$TP " "$OUT/jobs.txt" || lost "no tp$TP run planned (build/tpgemm --list?)"
cat "$OUT"/runs/*.jsonl >"$OUT/sanitizers.records.jsonl"
python3 tests/gpu/tier2_collect.py finish "$OUT/sanitizers.records.jsonl" "$OUT/sanitizers.json"
status=$?
if [ "$COMMIT" = 1 ]; then
    cp "$OUT/sanitizers.json" bench/results/sanitizers.json && echo "copied to bench/results/sanitizers.json"
fi
exit $status
