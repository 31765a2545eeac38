#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the reduce-scatter ring proxy at few tokens (`kernel_selftest --rs-few`, new):
# the wave check's few-token pick (ping-pong 64x128, pp64tma) against the ping-pong 128x128 (pp128tma) and the wide
# kernel (wide3tma), ring / plain at M = 128 / 512 / 2048, TP = 2 and 4.
export PATH="$PATH:/usr/local/cuda/bin"
build/selftest/kernel_selftest --no-perf --no-cases --rs-few --only pp64tma,pp128tma,wide3tma > $OUT/rs_few.log 2>&1
echo "rc=$?" >> $OUT/rs_few.log
tail -22 $OUT/rs_few.log
