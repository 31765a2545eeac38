# Sourced by the one-GPU device-call scripts from 2026-12-05 on (the earlier call_*.sh spell it out: each is the record
# of what ran). Needs OUT (the call's folder) set first. Gives: the NVLink-multicast variables, $R (the records, tarred
# into $OUT/records.tgz on exit), `at STEP RC` (a line of $OUT/summary.txt with the seconds so far) and
# $R/provenance.txt (the date, bench/x2/tree_hash.sh's hash of the sources, the GPUs).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
R=$OUT/r; mkdir -p "$R"; trap 'tar -C "$OUT" -czf "$OUT/records.tgz" r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a "$OUT/summary.txt"; }
{ date -u; bash bench/x2/tree_hash.sh; nvidia-smi -L; } > "$R/provenance.txt" 2>&1
# logged NAME LOG SECONDS CMD...: CMD under a timeout (SIGINT first, so that pytest still prints its summary), its
# output in $R/LOG, then `at NAME` with its exit status (environment settings through `env`)
logged() { local name=$1 log=$2 secs=$3; shift 3; timeout -s INT -k 10 "$secs" "$@" >"$R/$log" 2>&1; at "$name" $?; }
# c_tests: every build/tests/test_* with its log in $R, a FAILED line in $R/c_tests.txt each, then `at "C tests (N
# failed)"` (from 2026-12-07 05:20Z; the earlier scripts spell the loop out)
c_tests() {
    local fails=0 t
    for t in build/tests/test_*; do
        case "$t" in *.o | *.d) continue ;; esac
        "$t" >"$R/$(basename "$t").log" 2>&1 || { fails=$((fails + 1)); echo "FAILED $t" | tee -a "$R/c_tests.txt"; }
    done
    at "C tests ($fails failed)" "$fails"
}
