#!/bin/bash
# One device call (1 GPU, <= ~6 min): the host code under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer
# where it only runs with a GPU (context and op creation, IPC, tensor maps, graph build and capture, the NCCL
# transport's setup, the timeout's abort and the destroy), every rank on the one GPU. The binaries are built here (the
# GPU machine's gcc may lack the sanitizers' static runtimes) and carried:
#   python3 -c "from tests import sanitized_build as s; s.build(gpu=True)"
#   bash bench/results/experiments/call_sanitized_host.sh --stage
# then on the device, carrying build/sanitize_gpu:
#   bash bench/results/experiments/call_sanitized_host.sh
S=build/sanitize_gpu
if [ "${1:-}" = --stage ]; then
    rm -rf "$S" && mkdir -p "$S/tests"
    # the carry's 64 MiB hold the tree and these four (each binary holds every kernel: ~8 MiB)
    cp build/sanitize/tpgemm "$S/" && cp build/sanitize/tests/gpu_{epochs,timeout,multiprocess} "$S/tests/"
    for f in "$S/tpgemm" "$S"/tests/*; do objcopy --compress-debug-sections=zlib "$f"; done
    # the three negative controls of tests/test_sanitizers.py (PROBES) as one program (the carry holds ~1.5 MiB more,
    # not three times that), built with the binaries' flags (tests/sanitized_build.py: SANITIZE): each sanitizer must
    # report on the GPU machine too, or a clean run there means nothing
    mkdir "$S/probes" && cat > "$S/probes/probe.c" <<'C'
#include <limits.h>
#include <stdlib.h>
#include <string.h>
void *volatile keep;
int main(int c, char **v) { /* heap: a read past a block; signed: an overflow; else: a leak */
    if (c > 1 && !strcmp(v[1], "heap")) { volatile char *p = malloc(8); int r = p[8]; free((void *)p); return r; }
    if (c > 1 && !strcmp(v[1], "signed")) { volatile int x = INT_MAX; return x + c > 0; }
    keep = malloc(64);
    keep = 0;
    return 0;
}
C
    gcc -O0 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -static-libasan \
        -static-libubsan "$S/probes/probe.c" -o "$S/probes/probe" && strip --strip-debug "$S/probes/probe" || exit 1
    du -sh "$S"; exit 0
fi
OUT=${OUT:-build/sanitized_host}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
# The driver's and NCCL's own allocations live to the process's end: their leaks are theirs, not ours.
printf 'leak:libcuda.so\nleak:libnvidia\nleak:libnccl\n' > "$R/lsan.supp"
export ASAN_OPTIONS=protect_shadow_gap=0:exitcode=86:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$R/lsan.supp:print_suppressions=1"
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
NCCL_LIB=$(python3 -c "import sys; sys.path.insert(0, 'tests'); from test_gpu import nccl_library
print(nccl_library())" 2>/dev/null)
echo "NCCL library: $NCCL_LIB" | tee -a "$R/provenance.txt"
# the negative controls first: each sanitizer reports its probe here (a heap overflow, a signed overflow, a leak); one
# that does not makes the call fail, whatever follows
unreported=0
for probe in heap:heap-buffer-overflow signed:"signed integer overflow" leak:"detected memory leaks"; do
    "$S/probes/probe" "${probe%%:*}" > "$R/probe_${probe%%:*}.log" 2>&1
    rc=$?
    verdict="NOT REPORTED"
    [ $rc -ne 0 ] && grep -qF "${probe#*:}" "$R/probe_${probe%%:*}.log" && verdict=reported
    echo "negative control ${probe%%:*}: exit $rc, $verdict" | tee -a "$OUT/summary.txt"
    [ "$verdict" = reported ] || unreported=$((unreported + 1))
done
# the paths only a GPU runs first (contexts across processes, the timeout's abort, the NCCL transport), then the CLI
logged "gpu_timeout 200 --share-device" timeout_shared.log 150 "${GPU_ENV[@]}" $S/tests/gpu_timeout 200 \
    --share-device
logged "gpu_multiprocess --share-device" mp_shared.log 120 "${GPU_ENV[@]}" $S/tests/gpu_multiprocess --share-device
logged "gpu_epochs 2 --share-device" epochs_shared.log 120 "${GPU_ENV[@]}" $S/tests/gpu_epochs 2 --share-device
logged "gpu_multiprocess --share-device --nccl" mp_nccl.log 120 "${GPU_ENV[@]}" TPG_NCCL_LIBRARY="$NCCL_LIB" \
    $S/tests/gpu_multiprocess --share-device --nccl
for c in ag_rota_bf16_wide_tp2 rs_tila_bf16_tp2 rs_tila_bf16_ce_tp2 ag_rota_e4m3_tp2 rs_tila_bf16_sk64_tp2; do
    logged "tpgemm --config $c --share-device" "cli_$c.log" 60 "${GPU_ENV[@]}" $S/tpgemm --share-device \
        --config "$c" --m 4096 --n 4096 --k 4096 --iterations 5 --warmup-iterations 2
done
logged "tpgemm --copy-chunks 3 --overlap-barriers" cli_pieces.log 60 "${GPU_ENV[@]}" $S/tpgemm --share-device \
    --config ag_rota_bf16_tp2 --m 4096 --n 4096 --k 4096 --copy-chunks 3 --overlap-barriers --iterations 3
logged "tpgemm 128 tokens (gathered walk)" cli_few.log 60 "${GPU_ENV[@]}" $S/tpgemm --share-device --tp 2 \
    --m 128 --n 10240 --k 8192 --iterations 3
logged "tpgemm --model llama3-8b --tp 2 --share-device" cli_model.log 90 "${GPU_ENV[@]}" $S/tpgemm \
    --share-device --model llama3-8b --tp 2 --tokens 2048 --iterations 3 --warmup-iterations 1
grep -lE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$R"/*.log | grep -v /probe_ | sed 's/^/sanitizer report in /'
for f in "$R"/*.log; do case $f in */probe_*) ;; *) grep -hE "^SUMMARY: " "$f" ;; esac; done | sort | uniq -c
cat "$OUT/summary.txt"
if [ $unreported -gt 0 ]; then
    echo "NEGATIVE CONTROL FAILED: $unreported sanitizer(s) reported nothing here; the clean result above means nothing"
    exit 1
fi
