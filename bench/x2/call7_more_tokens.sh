#!/usr/bin/env bash
# x2 call 7 (nvidia-h200-x2, ~450 s): 2048 and 512 tokens (the wave check's picks - ping-pong, 128x160 - against the
# wide kernel as an extra variant), and 16 tokens (decode), one round each.
# Back in $OUT: summary.txt, the three tables, records.tgz.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
build
tp_run m2048 170 --rounds 1 --tokens 2048 --alt-config ag_rota_bf16_wide
tp_run m512 170 --rounds 1 --tokens 512 --alt-config ag_rota_bf16_wide
tp_run m16 170 --rounds 1 --tokens 16
cat "$OUT"/*_table.md 2>/dev/null | tail -60
cat "$OUT/summary.txt"
