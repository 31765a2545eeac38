#!/bin/bash
# One device call (nvidia-h200): a TP = 1 one-stage walk of few tiles launched on fewer CTAs than SMs
# (grid_size_1505Z.patch: TPG_EXP_GRID = G launches G CTAs a tile where the spread applies, unset = every SM).
# The fixed cost of a decode call (docs/perf_notes/2026-12-03-e.md: one tile 5.6 us against cuBLAS's 2.7; cuBLAS ran
# 4 CTAs, we 132). (1) reference checks of every grid mode on the shapes below; (2) avg_ms of 3000 back-to-back calls
# per (shape, mode), three rounds with the modes in turn. Carry build/tpgemm.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
T=build/tpgemm
SHAPES=("1t 16 128 64 ag_rota_bf16_pp64_tp1" "16t 16 2048 512 ag_rota_bf16_pp64_tp1"
        "32t 16 4096 2048 ag_rota_bf16_pp64_tp1" "16tk 16 2048 4096 ag_rota_bf16_pp64_tp1"
        "40t 16 5120 8192 ag_rota_bf16_pp64_tp1" "64t 64 8192 4096 ag_rota_bf16_pp64_tp1"
        "128x128-16t 128 2048 4096 ag_rota_bf16_tp1" "wide-16t 16 4096 2048 ag_rota_bf16_wide_tp1"
        "wide-48t 128 12288 4096 ag_rota_bf16_wide_tp1")
MODES=(0 1 2 4)
for s in "${SHAPES[@]}"; do
  read -r name m n k cfg <<<"$s"
  for g in "${MODES[@]}"; do
    TPG_EXP_GRID=$g timeout 60 $T --tp 1 --devices 0 --config $cfg --m $m --n $n --k $k --alpha 0.5 --beta 1 --l 2 \
      --iterations 5 --warmup-iterations 1 --json > $OUT/check_${name}_$g.json 2>$OUT/check_${name}_$g.err
    echo "check $name grid=$g rc=$?"
  done
done
for round in 1 2 3; do
  for s in "${SHAPES[@]}"; do
    read -r name m n k cfg <<<"$s"
    for g in "${MODES[@]}"; do
      TPG_EXP_GRID=$g timeout 60 $T --tp 1 --devices 0 --config $cfg --m $m --n $n --k $k --iterations 3000 \
        --warmup-iterations 300 --no-check --json > $OUT/t_${name}_${g}_$round.json 2>$OUT/t_${name}_${g}_$round.err
    done
  done
done
python3 - "$OUT" <<'PY'
import json, sys, glob, statistics, os
out = sys.argv[1]
rows = {}
for f in glob.glob(f"{out}/t_*.json"):
    name, g, r = os.path.basename(f)[2:-5].rsplit("_", 2)
    try: rows.setdefault(name, {}).setdefault(g, []).append(json.load(open(f))["avg_ms"] * 1e3)
    except Exception as e: print("bad", f, e)
print("| shape | " + " | ".join(f"grid {g} us" for g in ["0", "1", "2", "4"]) + " | 2 / 0 | 1 / 0 |")
print("|---|---|---|---|---|---|---|")
for name, d in rows.items():
    med = {g: statistics.median(v) for g, v in d.items()}
    print(f"| {name} | " + " | ".join(f"{med.get(g, float('nan')):.2f} ({','.join(f'{x:.2f}' for x in d.get(g, []))})"
          for g in ["0", "1", "2", "4"]) + f" | {med['2'] / med['0']:.3f} | {med['1'] / med['0']:.3f} |")
PY
