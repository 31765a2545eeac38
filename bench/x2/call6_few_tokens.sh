#!/usr/bin/env bash
# x2 call 6 (nvidia-h200-x2, ~540 s): the fused calls at few tokens, first across GPUs (rehearsed with both ranks on
# one GPU: bench/results/experiments/call_bench_rehearsal_1920Z.sh), one round each: 128 tokens with the gathered
# walk's shards by copy engine and the one-hop walk kept a ring as extra variants; 32 tokens with the row rule's
# 64x128 against the 128x128 it replaced (rowrule), and with the stream-K 64x128 by name (sk64).
# Back in $OUT: summary.txt, the three tables, records.tgz (their JSON and logs).
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
build
tp_run m128 180 --rounds 1 --tokens 128 --alt-gather-copy-engine --alt-rs-ring
tp_run m32_rowrule 180 --rounds 1 --tokens 32 --tag rowrule --alt-config rs_tila_bf16
tp_run m32_sk64 180 --rounds 1 --tokens 32 --tag sk64 --alt-config ag_rota_bf16_sk64,rs_tila_bf16_sk64
cat "$OUT"/*_table.md 2>/dev/null | tail -60
cat "$OUT/summary.txt"
