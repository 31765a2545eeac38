#!/usr/bin/env bash
# Tier-2 GPU correctness (device machine, 2 x H200): every schedule x {bf16, fp16} at TP = 2 on the eight
# shapes of measured-anchors.md plus four small ones; every other shipped config on four shapes (the few-token
# tiles, configs with a wave_weight, on two of their own); TP = 1 on one GPU; alpha = 0.5, beta = -0.75, L = 2;
# compute-sanitizer memcheck on a small TP = 2 run of each schedule. Each run is build/tpgemm --json with
# the reference check (poisoned output, fp32 reference, bitwise determinism over 3 runs) on.
#
# Usage: tests/gpu/run_tier2.sh [--tp N] [--share-device] [--commit-results] [--quick]
#   --tp N            TP degree of the main, scalars and memcheck groups (default 2; 4 and 8 need the
#                     4- and 8-GPU machines); the results file is tier2.json, or tier2_tpN.json for N != 2
#   --share-device    every rank on GPU 0 (build/tpgemm --share-device): the fused schedules' correctness at
#                     TP = N on one GPU, no memcheck (its serialized launches cannot run ranks side by side);
#                     results in tier2_shared_tpN.json. Not a substitute for the N-GPU run: no NVLink, no
#                     peer's clock, half the SMs a rank.
#   --commit-results  also copy the collected JSON to bench/results/
#   --quick           only the four small shapes (a smoke test, about a minute)
#   TIER2_GROUPS=g,...  run only these groups (e.g. overlap_barriers,copy_chunks): a change's own checks at
#                     another TP in a short device call; the summary then counts those runs only
#   TIER2_SKIP_GROUPS=g,...  leave out these groups (run_all.sh across GPUs: tp1, one GPU's runs); a group added
#                     later is then in by default
# Output: $OUT/<results file> (OUT defaults to build/tier2; tier2.json, tier2_tpN.json, tier2_shared_tpN.json, with
# _quick before .json for a --quick run) with the exact command of every run, then a summary table (pass / fail
# counts per group). Exit status: 0 if every run passed, 1 otherwise.
#
#   TPGEMM=path       the CLI to run (default build/tpgemm); RUN_TIMEOUT=s bounds one run (default 180)
#   TIER2_BUDGET_S / TIER2_HARD_S  when the last run may start / when all must end (defaults 450 / +60 s; with
#                     STEP_BUDGET_S set, as run_all.sh and bench/x2 do: 40 s / 10 s before it)
#
# Run time: a few hundred runs (docs/TESTING.md has the last counts, ~334-370 with every group), ~2-3 s
# each (mostly process start, CUDA context, allocation and fill; the largest, 405B-fc1, does 10 GEMM calls of
# ~50 ms), memcheck runs ~10-30 s each; one run at a time, within the budget above.
set -u
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/cuda/bin"

COMMIT=0
QUICK=0
SHARE=()
TP=2
while [ $# -gt 0 ]; do
    case "$1" in
    --commit-results) COMMIT=1 ;;
    --quick) QUICK=1 ;;
    --share-device) SHARE=(--share-device) ;;
    --tp) shift; TP="${1:-}" ;;
    *) echo "run_tier2.sh: unknown argument '$1' (use --tp N, --share-device, --commit-results, --quick)" >&2; exit 2 ;;
    esac
    shift
done
case "$TP" in 2 | 4 | 8) ;; *) echo "run_tier2.sh: --tp must be 2, 4 or 8, got '$TP'" >&2; exit 2 ;; esac
RESULT_NAME=tier2.json
[ "$TP" = 2 ] || RESULT_NAME="tier2_tp$TP.json"
[ ${#SHARE[@]} = 0 ] || RESULT_NAME="tier2_shared_tp$TP.json"
# a --quick run never takes the name of the full run's record, which --commit-results would replace in bench/results/
[ "$QUICK" = 0 ] || RESULT_NAME="${RESULT_NAME%.json}_quick.json"
# ranks sharing a GPU run copy-engine partials only with 32 hardware queues (ce_partials.c): one() gives every such
# run that environment, whichever configs carry them (build/tpgemm --share-device sets it too, unless it is set)
CE_QUEUES=()
[ ${#SHARE[@]} = 0 ] || CE_QUEUES=(env CUDA_DEVICE_MAX_CONNECTIONS=32)

OUT="${OUT:-$PWD/build/tier2}"
mkdir -p "$OUT"
TPGEMM="${TPGEMM:-build/tpgemm}"
if [ ! -x "$TPGEMM" ]; then
    ninja build/tpgemm || { echo "run_tier2.sh: build/tpgemm does not build" >&2; exit 1; }
fi
RECORDS="$OUT/tier2.records.jsonl"
: >"$RECORDS"
COLLECT="python3 tests/gpu/tier2_collect.py"
# The groups below read --list's columns by position: a failing --list or a moved column would leave them running
# nothing, which reads as no failure - so either is a failed record
list_head=$("$TPGEMM" --list 2>/dev/null | head -1 | awk '{print $1, $2, $3, $4, $5, $6, $7}')
if [ "$list_head" != "config schedule tp dtype tile stages kernel" ]; then
    echo "run_tier2.sh: $TPGEMM --list's header is '$list_head', not its columns config .. kernel" >&2
    python3 -c 'import json, sys; print(json.dumps({"group": "list", "label": "--list columns",
        "command": sys.argv[1] + " --list", "exit_code": 1, "seconds": 0, "passed": False, "result": None,
        "reason": "--list failed or its columns moved: the groups that read them would run nothing",
        "stderr_tail": ""}))' "$TPGEMM" >>"$RECORDS"
fi
RUN_TIMEOUT="${RUN_TIMEOUT:-180}"
# A device wait longer than 3 s on these shapes is a hang: fail fast instead of the runtime's 10 s default.
ITERS=(--iterations 5 --warmup-iterations 2 --timeout-ms 3000)
# Past BUDGET_S, remaining runs are recorded as failed without running; by HARD_S every run has ended (a run's
# limit is cut to what is left before it), so the script writes its JSON before a caller's own limit stops it.
# Under run_all.sh (STEP_BUDGET_S: its step's cap) 40 s and 10 s before that cap; alone 450 s and 60 s more.
if [ -n "${STEP_BUDGET_S:-}" ]; then
    BUDGET_S="${TIER2_BUDGET_S:-$((STEP_BUDGET_S - 40))}"
    HARD_S="${TIER2_HARD_S:-$((STEP_BUDGET_S - 10))}"
else
    BUDGET_S="${TIER2_BUDGET_S:-450}"
    HARD_S="${TIER2_HARD_S:-$((BUDGET_S + 60))}"
fi
START=$(date +%s)

SCHEDULES=(AllGather1D_TilingCD_RotatingA AllGather1D_TilingCD_RotatingB
           ReduceScatter1D_TilingA_RotatingC ReduceScatter1D_TilingB_RotatingC)
DTYPES=(bf16 fp16)
# name M N K (measured-anchors.md, then four small shapes. The TilingA reduce-scatter rings of two walk their stages
# interleaved (params.c): small-c's is one wave of one tile row a stage at TP = 2 on one or two GPUs; small-d's has
# 64 / 32 rows and 64 / 32 MiB of B a stage at TP = 2 / 4 in several waves - on one GPU, and at TP = 4 across GPUs)
ANCHORS=("405B-fc1 16384 106496 16384" "70B-fc1 16384 57344 8192" "70B-qkv 16384 10240 8192"
         "8B-qkv 8192 6144 4096" "405B-fc2 16384 16384 53248" "70B-fc2 16384 8192 28672"
         "70B-o 16384 8192 8192" "8B-o 8192 4096 4096")
SMALL=("small-a 512 1024 256" "small-b 2048 3072 1024" "small-c 128 1024 8192" "small-d 128 8192 8192")
if [ "$QUICK" = 1 ]; then SHAPES=("${SMALL[@]}"); else SHAPES=("${ANCHORS[@]}" "${SMALL[@]}"); fi

# one GROUP LABEL SANITIZE(0/1) ARGS... : runs build/tpgemm ARGS --json and records it.
one() {
    local group=$1 label=$2 sanitize=$3
    shift 3
    local cmd=("$TPGEMM" "$@" --json) log="" t0 t1 rc
    if [ -n "${TIER2_GROUPS:-}" ] && [[ ",$TIER2_GROUPS," != *",$group,"* ]]; then return 0; fi
    [[ ",${TIER2_SKIP_GROUPS:-}," == *",$group,"* ]] && return 0
    if [ "$sanitize" = 1 ]; then
        log="$OUT/memcheck_${label//[^A-Za-z0-9_.-]/_}.log"
        cmd=(compute-sanitizer --tool memcheck --log-file "$log" --error-exitcode 99 "${cmd[@]}")
    fi
    cmd=(${CE_QUEUES[@]+"${CE_QUEUES[@]}"} "${cmd[@]}")
    local elapsed=$(($(date +%s) - START)) limit
    limit=$((HARD_S - elapsed))
    [ "$limit" -gt "$RUN_TIMEOUT" ] && limit=$RUN_TIMEOUT
    if [ "$elapsed" -gt "$BUDGET_S" ] || [ "$limit" -lt 5 ]; then
        echo "not run: the ${BUDGET_S} s budget (hard end ${HARD_S} s) of run_tier2.sh was spent" >"$OUT/run.err"
        : >"$OUT/run.out"
        $COLLECT add "$RECORDS" "$group" "$label" 125 0 "$OUT/run.out" "$OUT/run.err" -- "${cmd[@]}"
        return
    fi
    t0=$(date +%s.%N)
    # in the background, so that a TERM to this script (a caller's timeout) reaches the run too: `timeout` puts
    # itself into a process group of its own, which the caller's group kill does not reach
    timeout "$limit" "${cmd[@]}" >"$OUT/run.out" 2>"$OUT/run.err" &
    RUN_PID=$!
    wait "$RUN_PID"
    rc=$?
    RUN_PID=""
    t1=$(date +%s.%N)
    $COLLECT add "$RECORDS" "$group" "$label" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" "$OUT/run.out" "$OUT/run.err" \
        $log ${TIER2_STDERR:+--stderr "$TIER2_STDERR"} -- "${cmd[@]}"
}

RUN_PID=""
trap '[ -n "$RUN_PID" ] && kill -TERM -- -"$RUN_PID" 2>/dev/null; exit 143' TERM INT

echo "== tier 2 on: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd, -)"

# TP = $TP: every schedule x dtype x shape.
for shape in "${SHAPES[@]}"; do
    read -r name m n k <<<"$shape"
    for sched in "${SCHEDULES[@]}"; do
        for dt in "${DTYPES[@]}"; do
            one "tp$TP" "$name/$sched/$dt" 0 --schedule "$sched" --tp "$TP" --dtype "$dt" ${SHARE[@]+"${SHARE[@]}"} \
                --m "$m" --n "$n" --k "$k" "${ITERS[@]}"
        done
    done
done

# Every other shipped TP = $TP config (kernels that are not the default of their schedule and dtype,
# e.g. the cooperative 128x256 next to the ping-pong default) on four shapes, so no shipped kernel
# goes untested.
VARIANT_SHAPES=("70B-qkv 16384 10240 8192" "70B-o 16384 8192 8192" "8B-o 8192 4096 4096" "small-a 512 1024 256")
# ...and the tiles for few tokens (configs with a wave_weight: the default only where their tiles fill the waves
# better) on two shapes of their regime, 70B-qkv's M = 128 and 70B-o's M = 512 (at TP = 8, 16-row stages), short K
# (a few more runs: run_all.sh gives tier 2 300 s).
FEW_TOKEN_SHAPES=("qkv-m128 128 10240 1024" "o-m512 512 8192 1024")
if [ "$QUICK" = 1 ]; then VARIANT_SHAPES=("${SMALL[@]}"); FEW_TOKEN_SHAPES=("${SMALL[@]}"); fi
WAVE_CONFIGS=" $("$TPGEMM" --list --json | python3 -c 'import json, sys
print(" ".join(c["name"] for c in json.load(sys.stdin)["configs"] if c["wave_weight"]))') "
default_config() { # schedule dtype tp -> the config picked by --schedule/--dtype (the plan's first line) for a
    # short K and enough tiles that no last wave decides (tpg_config_pick's wave check stays out of it)
    "$TPGEMM" --dry-run --schedule "$1" --tp "$3" --dtype "$2" --m 16384 --n 16384 --k 256 2>/dev/null |
        awk '/^Plan:/ {print $2; exit}'
}
# Did the schedule x dtype loops above already run config $1 (schedule $2, dtype $3, tp $4)? Only for the
# dtypes they loop over: a config of another dtype (fp8) runs below, default or not.
ran_by_default() {
    case " ${DTYPES[*]} " in *" $3 "*) [ "$1" = "$(default_config "$2" "$3" "$4")" ] ;; *) return 1 ;; esac
}
wide_config() { # schedule -> its cooperative 128x256 bf16 config at TP = $TP
    "$TPGEMM" --list | awk -v s="$1" -v t="$TP" '$2 == s && $3 == t && $1 ~ /_bf16_wide_tp/ {print $1; exit}'
}
ce_config() { # reduce-scatter schedule -> its ping-pong bf16 config whose partials a copy engine carries, at TP = $TP
    # (the _ce twin, or the default itself once bench/x2/ce_default.py switched it: --list's notes say which)
    "$TPGEMM" --list | awk -v s="$1" -v t="$TP" '$2 == s && $3 == t && $4 == "bf16" && $5 == "128x128x64" &&
        /copy-engine partials/ {print $1; exit}'
}
pull_config() { # reduce-scatter schedule -> its ping-pong bf16 pulled-partial config at TP = $TP
    "$TPGEMM" --list | awk -v s="$1" -v t="$TP" '$2 == s && $3 == t && $1 ~ /_bf16_pull_tp/ {print $1; exit}'
}
while read -r cfg sched tp dt _; do
    [ "$tp" = "$TP" ] || continue
    ran_by_default "$cfg" "$sched" "$dt" "$TP" && continue
    shapes=("${VARIANT_SHAPES[@]}")
    [[ "$WAVE_CONFIGS" == *" $cfg "* ]] && shapes=("${FEW_TOKEN_SHAPES[@]}")
    for shape in "${shapes[@]}"; do
        read -r name m n k <<<"$shape"
        one variants "$name/$cfg" 0 --config "$cfg" --m "$m" --n "$n" --k "$k" "${ITERS[@]}" ${SHARE[@]+"${SHARE[@]}"}
    done
done < <("$TPGEMM" --list | tail -n +2)

# TP = 1 on one GPU.
for shape in "small-b 2048 3072 1024" "8B-o 8192 4096 4096"; do
    read -r name m n k <<<"$shape"
    for sched in "${SCHEDULES[@]}"; do
        for dt in "${DTYPES[@]}"; do
            one tp1 "$name/$sched/$dt" 0 --schedule "$sched" --tp 1 --devices 0 --dtype "$dt" \
                --m "$m" --n "$n" --k "$k" "${ITERS[@]}"
        done
    done
done

# Every other shipped TP = 1 config (e.g. the TP = 1-only cluster and fp8 kernels) on one GPU, two shapes (the
# few-token tiles on the first only: their TP = 1 configs share one kernel per dtype).
while read -r cfg sched tp dt _; do
    [ "$tp" = 1 ] || continue
    ran_by_default "$cfg" "$sched" "$dt" 1 && continue
    shapes=("small-b 2048 3072 1024" "8B-o 8192 4096 4096")
    [[ "$WAVE_CONFIGS" == *" $cfg "* ]] && shapes=("small-b 2048 3072 1024")
    for shape in "${shapes[@]}"; do
        read -r name m n k <<<"$shape"
        one tp1 "$name/$cfg" 0 --config "$cfg" --devices 0 --m "$m" --n "$n" --k "$k" "${ITERS[@]}"
    done
done < <("$TPGEMM" --list | tail -n +2)

# alpha = 0.5, beta = -0.75 (C read), L = 2 batches.
for sched in "${SCHEDULES[@]}"; do
    for dt in "${DTYPES[@]}"; do
        one scalars "alpha0.5-beta-0.75-L2/$sched/$dt" 0 --schedule "$sched" --tp "$TP" --dtype "$dt" \
            ${SHARE[@]+"${SHARE[@]}"} --m 2048 --n 3072 --k 1024 --l 2 --alpha 0.5 --beta -0.75 "${ITERS[@]}"
    done
done

# All-gather copies cut into pieces (--copy-chunks, runtime/src/copy_plan.h; equal whole-tile pieces, so possibly
# fewer than asked): the 8B-qkv problem in 32 (TP = 2: 32 pieces of 128 rows; TP = 8: 8), and shards of 1000 rows
# (not whole tiles of 128 or 256) in two batches, with C, in 5 asked (4 pieces).
for sched in "${SCHEDULES[@]}"; do
    case "$sched" in AllGather*) ;; *) continue ;; esac
    for dt in "${DTYPES[@]}"; do
        one copy_chunks "8B-qkv-c32/$sched/$dt" 0 --schedule "$sched" --tp "$TP" --dtype "$dt" ${SHARE[@]+"${SHARE[@]}"} \
            --m 8192 --n 6144 --k 4096 --copy-chunks 32 "${ITERS[@]}"
        one copy_chunks "ragged-L2-c5/$sched/$dt" 0 --schedule "$sched" --tp "$TP" --dtype "$dt" ${SHARE[@]+"${SHARE[@]}"} \
            --m $((1000 * TP)) --n $((1000 * TP)) --k 1024 --l 2 --beta -0.75 --copy-chunks 5 "${ITERS[@]}"
    done
done

# The barriers beside the GEMM (--overlap-barriers, runtime/src/overlap.c): the GEMM counts its epoch on from its
# previous launch (not from the start barrier) and an all-gather's closing barrier waits for the copies only; the check is
# the op's first call, the determinism check its later ones (every launch a new epoch). All-gather also with its
# copies in pieces.
for sched in "${SCHEDULES[@]}"; do
    for dt in "${DTYPES[@]}"; do
        one overlap_barriers "2048x3072x2048-L2/$sched/$dt" 0 --schedule "$sched" --tp "$TP" --dtype "$dt" \
            ${SHARE[@]+"${SHARE[@]}"} --m 2048 --n 3072 --k 2048 --l 2 --beta -0.75 --overlap-barriers "${ITERS[@]}"
    done
    case "$sched" in AllGather*) ;; *) continue ;; esac
    one overlap_barriers "8B-qkv-c4/$sched/bf16" 0 --schedule "$sched" --tp "$TP" --dtype bf16 ${SHARE[@]+"${SHARE[@]}"} \
        --m 8192 --n 6144 --k 4096 --copy-chunks 4 --overlap-barriers "${ITERS[@]}"
done

# The gathered all-gather walk (runtime/src/params.c, gathered_params: <= 128 rows a stage, one batch - every shard,
# the own one too, in tp slots, then one GEMM of all M rows; by default the GEMM's CTAs pull the shards, copy-engine
# nodes bring them with pieces, the barriers beside the GEMM or --gather-copy-engine): 64 rows a stage with alpha /
# beta / C, pulled, by copy nodes, and with the barriers beside the GEMM, and on the cooperative wide kernel by name;
# 128 rows a stage of the 64x128 with the copies in pieces (3 asked: 2 of 64 rows); shards of 40 rows of K = 1032
# (82560 B: the slots end to end are not 256-byte multiples).
G=(--n $((1536 * TP)) --k 1024 --alpha 0.5 --beta -0.75 ${SHARE[@]+"${SHARE[@]}"} "${ITERS[@]}")
for dt in "${DTYPES[@]}"; do
    S=(--schedule AllGather1D_TilingCD_RotatingA --tp "$TP" --dtype "$dt" --m $((64 * TP)))
    one gathered "m$((64 * TP))-beta-0.75/$dt" 0 "${S[@]}" "${G[@]}"
    one gathered "m$((64 * TP))-beta-0.75-copy-engine/$dt" 0 "${S[@]}" --gather-copy-engine "${G[@]}"
    one gathered "m$((64 * TP))-beta-0.75-overlap/$dt" 0 "${S[@]}" --overlap-barriers "${G[@]}"
    one gathered "m$((128 * TP))-beta-0.75-c3/$dt" 0 --config "ag_rota_${dt}_pp64_tp$TP" --m $((128 * TP)) \
        --copy-chunks 3 "${G[@]}"
done
one gathered "m$((64 * TP))-beta-0.75/wide" 0 --config "$(wide_config AllGather1D_TilingCD_RotatingA)" \
    --m $((64 * TP)) "${G[@]}"
one gathered "m$((40 * TP))-k1032/bf16" 0 --schedule AllGather1D_TilingCD_RotatingA --tp "$TP" --m $((40 * TP)) \
    --n $((1536 * TP)) --k 1032 ${SHARE[@]+"${SHARE[@]}"} "${ITERS[@]}"

# The one-hop reduce-scatter walk (runtime/src/params.c, one_hop_params: <= 64 rows a stage, one batch - one GEMM of
# all M rows into the rank's own slots, then a REDUCE kernel sums the rank's block of every rank's partial): 64 rows a
# stage with alpha / beta / C, kept a ring (--rs-ring), with the barriers beside the GEMM, on the wide kernel, with
# fp32 partials and in e4m3 by name; 16 rows a stage with ragged tiles (N = 1000: 7.8 tiles of 128), on the default
# pick (the ping-pong 64x128) and on the 128x128.
H=(--k 2048 --alpha 0.5 --beta -0.75 ${SHARE[@]+"${SHARE[@]}"} "${ITERS[@]}")
for dt in "${DTYPES[@]}"; do
    S=(--schedule ReduceScatter1D_TilingA_RotatingC --tp "$TP" --dtype "$dt" --m $((64 * TP)) --n 3072)
    one one_hop "m$((64 * TP))-beta-0.75/$dt" 0 "${S[@]}" "${H[@]}"
    one one_hop "m$((64 * TP))-beta-0.75-ring/$dt" 0 "${S[@]}" --rs-ring "${H[@]}"
    one one_hop "m$((64 * TP))-beta-0.75-overlap/$dt" 0 "${S[@]}" --overlap-barriers "${H[@]}"
    one one_hop "m$((16 * TP))-n1000/$dt" 0 --schedule ReduceScatter1D_TilingA_RotatingC --tp "$TP" --dtype "$dt" \
        --m $((16 * TP)) --n 1000 "${H[@]}"
    # the default above is the ping-pong 64x128 there (the row rule); the 128x128 keeps its ragged one-hop case
    one one_hop "m$((16 * TP))-n1000-128x128/$dt" 0 --config "rs_tila_${dt}_tp$TP" --m $((16 * TP)) --n 1000 "${H[@]}"
done
for cfg in "$(wide_config ReduceScatter1D_TilingA_RotatingC)" "rs_tila_bf16_f32p_tp$TP" "rs_tila_e4m3_tp$TP"; do
    one one_hop "m$((64 * TP))-beta-0.75/$cfg" 0 --config "$cfg" --m $((64 * TP)) --n 3072 "${H[@]}"
done

# Pulled partials (configs with pull_partials, runtime/src/params.c: each stage's partial stays in the sender's slot
# and the receiver loads it from there): beyond their four shapes in the variants group, alpha / beta / C in two
# batches, with and without the barriers beside the GEMM (the receiver polls flags the sender's kernel raises).
while read -r cfg sched tp dt _; do
    [ "$tp" = "$TP" ] || continue
    case "$cfg" in *_pull_tp*) ;; *) continue ;; esac
    for overlap in "" --overlap-barriers; do
        one pull_partials "2048x3072x2048-L2${overlap:+-overlap}/$cfg" 0 --config "$cfg" ${SHARE[@]+"${SHARE[@]}"} \
            --m 2048 --n 3072 --k 2048 --l 2 --alpha 0.5 --beta -0.75 $overlap "${ITERS[@]}"
    done
done < <("$TPGEMM" --list | tail -n +2)

# Fewer rows than a tile (runtime/src/params.c, a_box_rows: A's TMA box shrinks to the launch's rows, and the slot
# rows past it keep older data): every shipped kernel at TP = 1 on 12 rows in two batches with alpha / beta / C (the
# box ends 4 rows into the next batch), then each schedule at TP = $TP with 24 rows a stage: one GEMM of all rows where
# the walk is one-hop or gathered, and the rings' stages of 24 rows (kept a ring; two batches; e4m3).
declare -A FEW_KERNELS=()
while read -r cfg sched tp dt tile stages kernel _; do
    [ "$tp" = 1 ] && [ -z "${FEW_KERNELS[$kernel]:-}" ] || continue
    FEW_KERNELS[$kernel]=1
    one few_rows "m12-L2/$cfg" 0 --config "$cfg" --devices 0 --m 12 --n 1000 --k 1024 --l 2 --alpha 0.5 --beta -0.75 \
        "${ITERS[@]}"
done < <("$TPGEMM" --list | tail -n +2)
for sched in "${SCHEDULES[@]}"; do
    one few_rows "m$((24 * TP))/$sched/bf16" 0 --schedule "$sched" --tp "$TP" --dtype bf16 ${SHARE[@]+"${SHARE[@]}"} \
        --m $((24 * TP)) --n 3072 --k 1024 --alpha 0.5 --beta -0.75 "${ITERS[@]}"
done
FEW=(--m $((24 * TP)) --n 3072 --k 1024 --alpha 0.5 --beta -0.75 ${SHARE[@]+"${SHARE[@]}"} "${ITERS[@]}")
one few_rows "m$((24 * TP))-ring/rs_tila_bf16" 0 --config "rs_tila_bf16_tp$TP" --rs-ring "${FEW[@]}"
one few_rows "m$((24 * TP))-ring/rs_tila_e4m3" 0 --config "rs_tila_e4m3_tp$TP" --rs-ring "${FEW[@]}"
one few_rows "m$((24 * TP))-L2/ag_rota_bf16" 0 --config "ag_rota_bf16_tp$TP" --l 2 "${FEW[@]}"

# The stream-K 64x128 (`*_sk64`, templates/kernels/stream_k.h): at TP = 1 the split rule's pick (16 x 4096 x 8192: 32
# tiles of 128 k-blocks split over every CTA), 12 and 40 rows in two batches with alpha / beta / C (a split tile's sums
# move only for its rows: one warp, three of four), two rows of tiles (128 x 2048 x 8192), a finisher's contributions
# through the ring filling it more than once (32 x 1024 x 16384: ~16 contributors of 2 units, 11 slots of 8; 8 x 256 x
# 65536: ~66 of one, 22 slots) and loaded from L2 at 64 rows (64 x 2048 x 16384: ~8 contributors of 4 units), fp16; at
# TP = $TP by name in the one GEMM of the gathered all-gather walk and the one-hop reduce-scatter walk (each rank's
# tiles split on its own CTAs; a finisher raises the one-hop tile flag).
SK=(--alpha 0.5 --beta -0.75 "${ITERS[@]}")
one stream_k "16x4096x8192/pick-tp1" 0 --schedule AllGather1D_TilingCD_RotatingA --tp 1 --devices 0 \
    --m 16 --n 4096 --k 8192 "${SK[@]}"
one stream_k "m12-L2x1000x8192/rs_tila_bf16_sk64_tp1" 0 --config rs_tila_bf16_sk64_tp1 --devices 0 --m 12 --n 1000 \
    --k 8192 --l 2 "${SK[@]}"
one stream_k "m40-L2x1000x8192/ag_rota_bf16_sk64_tp1" 0 --config ag_rota_bf16_sk64_tp1 --devices 0 --m 40 --n 1000 \
    --k 8192 --l 2 "${SK[@]}"
one stream_k "128x2048x8192/ag_rotb_bf16_sk64_tp1" 0 --config ag_rotb_bf16_sk64_tp1 --devices 0 --m 128 --n 2048 \
    --k 8192 "${SK[@]}"
one stream_k "32x1024x16384/ag_rota_bf16_sk64_tp1" 0 --config ag_rota_bf16_sk64_tp1 --devices 0 --m 32 --n 1024 \
    --k 16384 "${SK[@]}"
one stream_k "8x256x65536/rs_tila_bf16_sk64_tp1" 0 --config rs_tila_bf16_sk64_tp1 --devices 0 --m 8 --n 256 \
    --k 65536 "${SK[@]}"
one stream_k "64x2048x16384/rs_tila_bf16_sk64_tp1" 0 --config rs_tila_bf16_sk64_tp1 --devices 0 --m 64 --n 2048 \
    --k 16384 "${SK[@]}"
one stream_k "16x5120x8192/ag_rota_fp16_sk64_tp1" 0 --config ag_rota_fp16_sk64_tp1 --devices 0 --m 16 --n 5120 \
    --k 8192 "${SK[@]}"
one stream_k "m$((16 * TP))-gathered/ag_rota_bf16_sk64_tp$TP" 0 --config "ag_rota_bf16_sk64_tp$TP" \
    ${SHARE[@]+"${SHARE[@]}"} --m $((16 * TP)) --n $((5120 * TP)) --k 8192 "${SK[@]}"
one stream_k "m$((16 * TP))-one-hop/rs_tila_bf16_sk64_tp$TP" 0 --config "rs_tila_bf16_sk64_tp$TP" \
    ${SHARE[@]+"${SHARE[@]}"} --m $((16 * TP)) --n 5120 --k $((8192 * TP)) "${SK[@]}"

# Timelines (trace build, tests/gpu/trace_case.sh): each run's --trace JSON must be whole by bench/timeline.py --check
# (every CTA, record and tile of the call; epilogues and partial waits inside their tiles): a ping-pong ring and a
# cooperative all-gather at TP = $TP, all-gather copies in pieces, a 2x1 cluster whose last partner tile is past the
# edge (17 tile rows), stream-K at TP = 1 and in the one-hop walk (contributions and finishers labelled), the copies,
# flags, the one-hop walk's REDUCE and a copy-engine ring's partial bands and their flags timed by CUDA events
# (trace_events.c), and a walk of 528 units a CTA, past the default cap of 512 records a lane, which the CLI traces
# again with a cap of 704.
trace_one() {
    local TPGEMM=tests/gpu/trace_case.sh # one() runs $TPGEMM
    local TIER2_STDERR=always            # and keeps the timeline's summary (stderr) in the record
    one trace "$@"
}
if [ -z "${TIER2_GROUPS:-}" ] || [[ ",$TIER2_GROUPS," == *",trace,"* ]]; then
    [ -x build/trace/tpgemm ] || ninja build/trace/tpgemm >/dev/null ||
        echo "run_tier2.sh: build/trace/tpgemm does not build (the trace group's runs fail)" >&2
fi
TR=(--alpha 0.5 --beta -0.75 "${ITERS[@]}")
TRS=(${SHARE[@]+"${SHARE[@]}"} --m 2048 --n 3072 --k 1024 "${TR[@]}")
trace_one "2048x3072x1024/rs_tila_bf16_tp$TP" 0 --config "rs_tila_bf16_tp$TP" "${TRS[@]}"
trace_one "2048x3072x1024/ag_rota_bf16_wide_tp$TP" 0 --expect-timed "copy stage 1" --expect-timed "flag stage 1" \
    --config "ag_rota_bf16_wide_tp$TP" "${TRS[@]}"
# Eight ranks on one GPU with their copies in pieces and the traced graph's event chain are more branches than the 32
# hardware queues hold apart: a copy queued behind another rank's waiting GEMM until the barrier timed out (2026-12-05,
# 1643Z; untraced, and at TP = 4 or with whole copies, it passed). So with --share-device that case runs at TP = 4.
PIECES_TP=$TP
if [ ${#SHARE[@]} != 0 ] && [ "$TP" -gt 4 ]; then
    PIECES_TP=4
    echo "run_tier2.sh: --share-device: the trace group's copies-in-pieces case runs at TP = 4 (the GPU's 32" \
        "hardware queues do not keep $TP ranks' traced branches apart)" >&2
fi
trace_one "2048x3072x1024-chunks4/ag_rota_bf16_tp$PIECES_TP" 0 --expect-timed "copy stage 1 (4 pieces)" \
    --config "ag_rota_bf16_tp$PIECES_TP" --copy-chunks 4 "${TRS[@]}"
CE_TRACED=$(ce_config ReduceScatter1D_TilingA_RotatingC)
trace_one "2048x3072x1024/${CE_TRACED:-no-copy-engine-config}" 0 --expect-timed "partial copy stage 0" \
    --expect-timed "partial flags stage 0" --config "${CE_TRACED:-no-copy-engine-config}" "${TRS[@]}"
trace_one "2176x2048x1024/gemm_bf16_wide_c2x1_tp1" 0 --config gemm_bf16_wide_c2x1_tp1 --devices 0 --m 2176 \
    --n 2048 --k 1024 "${TR[@]}"
trace_one "32x1024x16384/ag_rota_bf16_sk64_tp1" 0 --expect-stream-k --config ag_rota_bf16_sk64_tp1 --devices 0 \
    --m 32 --n 1024 --k 16384 "${TR[@]}"
trace_one "m$((16 * TP))-one-hop/rs_tila_bf16_sk64_tp$TP" 0 --expect-stream-k --expect-timed REDUCE \
    --config "rs_tila_bf16_sk64_tp$TP" \
    ${SHARE[@]+"${SHARE[@]}"} --m $((16 * TP)) --n 5120 --k $((8192 * TP)) "${TR[@]}"
trace_one "8192x139264x128/ag_rota_bf16_tp1" 0 --expect-retrace --config ag_rota_bf16_tp1 --devices 0 --m 8192 \
    --n 139264 --k 128 "${TR[@]}"

# compute-sanitizer memcheck, small TP = 2 run of each schedule (all-gather also with its copies in pieces,
# reduce-scatter also with pulled partials; every schedule also with the barriers beside the GEMM).
if [ ${#SHARE[@]} != 0 ]; then
    echo "run_tier2.sh: --share-device: no memcheck runs" >&2
elif command -v compute-sanitizer >/dev/null 2>&1; then
    # A run here ends in ~1-1.5 s across GPUs (2026-12-01); a 15 s bound keeps a run that hangs (a barrier
    # that memcheck's instrumentation no longer fits beside the GEMM, say) from eating the group's budget.
    MC=(--m 512 --n 1024 --k 256 --beta -0.75 --iterations 1 --warmup-iterations 1 --timeout-ms 15000)
    for sched in "${SCHEDULES[@]}"; do
        one memcheck "memcheck/$sched/bf16" 1 --schedule "$sched" --tp "$TP" --dtype bf16 "${MC[@]}"
        case "$sched" in AllGather*) ;; *)
            one memcheck "memcheck/$sched/bf16/overlap-barriers" 1 --schedule "$sched" --tp "$TP" --dtype bf16 \
                --overlap-barriers "${MC[@]}"
            one memcheck "memcheck/$sched/bf16/pull-partials" 1 --config "$(pull_config "$sched")" "${MC[@]}"
            continue ;;
        esac
        # the default at 512 x 1024 is ping-pong where the wide tiles leave the wave nearly empty (tpg_config_pick):
        # the wide kernel, the default at scale, by name
        one memcheck "memcheck/$sched/bf16/wide" 1 --config "$(wide_config "$sched")" "${MC[@]}"
        one memcheck "memcheck/$sched/bf16/copy-chunks-3" 1 --schedule "$sched" --tp "$TP" --dtype bf16 \
            --m $((1000 * TP)) --n $((1000 * TP)) --k 256 --l 2 --beta -0.75 --copy-chunks 3 --iterations 1 \
            --warmup-iterations 1 --timeout-ms 15000
    done
    # last: all-gather with its barriers beside the GEMM, whose start barrier must run next to a GEMM on
    # every SM (never run under memcheck yet)
    for sched in "${SCHEDULES[@]:0:2}"; do # the wide kernel by name, as before the small shape's pick moved
        one memcheck "memcheck/$sched/bf16/overlap-barriers" 1 --config "$(wide_config "$sched")" \
            --overlap-barriers "${MC[@]}"
    done
else
    echo "run_tier2.sh: compute-sanitizer not found; memcheck runs skipped (counted as failures)" >&2
    echo '{"group": "memcheck", "label": "compute-sanitizer missing", "command": "compute-sanitizer", "exit_code": 127, "seconds": 0, "passed": false, "reason": "compute-sanitizer not on PATH", "result": null, "stderr_tail": ""}' >>"$RECORDS"
fi

echo "== elapsed: $(($(date +%s) - START)) s"
$COLLECT finish "$RECORDS" "$OUT/$RESULT_NAME"
status=$?
if [ "$COMMIT" = 1 ]; then
    mkdir -p bench/results && cp "$OUT/$RESULT_NAME" "bench/results/$RESULT_NAME" && echo "copied to bench/results/$RESULT_NAME"
fi
exit $status
