# Sourced by the x2 session's call scripts (bench/x2/call*.sh): the environment every GPU program there keeps, a
# records folder tarred into $OUT/records.tgz on exit (a device call returns at most 8 files), and the call's clock.
# `budget_left` prints the seconds left before CALL_BUDGET_S (default 570: the device stops a command at 600).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT=${OUT:-build/x2-out}
R="$OUT/records"
mkdir -p "$R"
CALL_START=$(date +%s)
# which call, when, on which tree (bench/x2/tree_hash.sh here says whether a commit holds it)
{ echo "$0 $*"; date -u; bash bench/x2/tree_hash.sh; nvidia-smi -L 2>&1; } >"$R/provenance.txt"
# on exit: the records tarred; the call's status 1 where a step in summary.txt failed (the reply's rc flags it)
finish() {
    local rc=$?
    tar -C "$OUT" -czf "$OUT/records.tgz" records && rm -rf "$R"
    [ "$rc" = 0 ] && grep -q "exit [1-9]" "$OUT/summary.txt" 2>/dev/null && rc=1
    exit "$rc"
}
trap finish EXIT
budget_left() { echo $((${CALL_BUDGET_S:-570} - ($(date +%s) - CALL_START))); }
# limit CAP: the seconds for the next step, CAP or what is left of the call less 10 s; 0 when under 30 are left (a
# step then does not start: `timeout 0` would not bound it, and the device's stop at 600 s would lose the records)
limit() {
    local l=$(($(budget_left) - 10))
    [ "$l" -gt "$1" ] && l=$1
    [ "$l" -lt 30 ] && l=0
    echo "$l"
}
# note STEP RC: one line of the call's summary ($OUT/summary.txt, also in the reply's output)
note() { echo "$1: exit $2, at $(($(date +%s) - CALL_START)) s" | tee -a "$OUT/summary.txt"; }
# build: what the calls run, on a fresh machine (~20-30 s on 16 cores); the rest of the call goes on without it
build() {
    # at most 240 s, and 40 s short of the call's end, so that a slow build cannot outlast the device's stop
    local lim=$(($(budget_left) - 40))
    [ "$lim" -gt 240 ] && lim=240
    if [ "$lim" -lt 30 ]; then note "build (no time left)" 124; return; fi
    timeout -k 10 "$lim" ninja build/tpgemm build/libtpgemm.so tests >"$R/build.log" 2>&1
    note build $?
}
# tp_run TAG CAP ARGS...: bench/run_tp.sh --tp 2 ARGS, its files in $R/TAG and its log $R/TAG.log, bounded by CAP
# seconds or what is left of the call; its table copied next to the records (the JSON stays in them: 8 files)
tp_run() {
    local tag=$1 lim
    lim=$(limit "$2")
    shift 2
    if [ "$lim" = 0 ]; then note "run_tp $tag (no time left)" 124; return; fi
    # a collective waits at most 90 s for a rank hung on the device (the default 180 s would cost the call's shapes
    # after it; a legitimate wait - a shape's setup, its reference, a 1 s window - takes seconds)
    OUT="$R/$tag" TP_BENCH_TIMEOUT_S=$lim TP_BENCH_PG_TIMEOUT_S=90 bash bench/run_tp.sh --tp 2 "$@" >"$R/$tag.log" 2>&1
    note "run_tp $tag" $?
    cp "$R/$tag"/*_table.md "$OUT"/ 2>/dev/null
}
