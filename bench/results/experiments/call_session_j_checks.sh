#!/bin/bash
# One device call (nvidia-h200, 1 GPU, ~8 min) for the 2026-12-04 (22:08Z-) session's changes, which no GPU has run
# (docs/perf_notes/2026-12-04-j.md): the flag kernel's verdict when the launch gave up and the wrap-aware wait
# (gpu_transfer_flags, 8 cases), then a mutant of the verdict (the give-up test removed), which must fail it; the GPU
# pytest's one-GPU and shared-device cases (the op's reads on its own stream: tpg_op_sync's status, the epoch check,
# the copy-engine row counts; the NCCL transport's bounded connect; gpu_timeout's fresh context checked against the
# reference and its bounds; mp_run reworked); the trace build's read of its buffers. Since 2026-12-05 also the
# epoch-window changes (templates/kernels/epoch.h: gpu_barrier_epochs and its mutant; the rest through the pytest).
# Records tarred into $OUT/records.tgz. From the repository root:
#   bash bench/results/experiments/call_session_j_checks.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
OUT=${OUT:-build/session_j}
R=$OUT/r; mkdir -p "$R"; trap 'tar -C "$OUT" -czf "$OUT/records.tgz" r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a "$OUT/summary.txt"; }
{ date -u; bash bench/x2/tree_hash.sh; nvidia-smi -L; } > "$R/provenance.txt" 2>&1
ninja > "$R/build.log" 2>&1 && ninja tests bench >> "$R/build.log" 2>&1; at build $?
# run_mutant NAME SOURCE SED: build/tests/NAME must pass, then fail with SOURCE edited by SED (the change undone), then
# is rebuilt from the original
run_mutant() {
    timeout 60 build/tests/$1 > "$R/$1.log" 2>&1; at "$1" $?
    cat "$R/$1.log"
    cp "$2" "$R/$(basename "$2").orig"
    sed -i "$3" "$2"
    ninja build/tests/$1 > "$R/$1_mutant_build.log" 2>&1
    timeout 60 build/tests/$1 > "$R/$1_mutant.log" 2>&1; at "mutant $1 (must be 1)" $?
    grep -E "FAILED" "$R/$1_mutant.log"
    cp "$R/$(basename "$2").orig" "$2"
    ninja build/tests/$1 >> "$R/$1_mutant_build.log" 2>&1
}
# the flag kernel's verdict ignoring the launch's give-up again: case "flags up but the launch gave up" must fail
run_mutant gpu_transfer_flags runtime/src/transfer_flags.cu \
    's/all \&\& !tpg_spin::launch_gave_up(p.gave_up_epoch, epoch) ? epoch/all ? epoch/'
# 2026-12-05: the closing barrier's notice across the epoch range (8 cases), under the old signed test case 2 (epoch
# 0x80000001, a notice never raised) must fail
run_mutant gpu_barrier_epochs runtime/src/barrier.cu \
    's/if (tpg_epoch_reached(n, epoch)) return true;/if ((int)(n - epoch) >= 0) return true;/'
TPG_REQUIRE_GPUS=1 timeout 420 python3 -m pytest -q -rA tests/test_gpu.py > "$R/gpu_pytest.log" 2>&1
at "gpu pytest (one GPU: its own and the shared-device cases)" $?; tail -3 "$R/gpu_pytest.log"
for cfg in ag_rota_bf16_tp2 rs_tila_bf16_tp2; do
    timeout 120 build/trace/tpgemm --share-device --config $cfg --m 4096 --n 4096 --k 4096 \
        --trace "$R/trace_$cfg.json" > "$R/trace_$cfg.log" 2>&1
    at "trace $cfg" $?; grep -E "Disposition|Error" "$R/trace_$cfg.log"
done
cat "$OUT/summary.txt"
