#!/bin/bash
# One device call (nvidia-h200, 1 GPU): where the reduce-scatter ring loses at few tokens (one or two tiles per CTA).
# (1) the ring's parts (walk: two stages, no flags or partials; flags: stage 0 raises its flags; ring: stage 1 waits
# and adds the partial) of the shipped picks there: pp64tma (70B-fc2 M = 128, 8B-o M = 256), pp128tma (70B-fc2
# M = 256, 70B-o / 8B-o M = 512-1024), wide3tma beside; (2) ncu per part at 70B-fc2 M = 128 (pp64tma) and 70B-fc2
# M = 256 (pp128tma): time, DRAM bytes, SM activity (the warm-up round, reversed: flags, walk, ring, plain x2 each).
export PATH="$PATH:/usr/local/cuda/bin"
S=build/selftest/kernel_selftest
timeout 150 $S --no-perf --no-cases --rs-parts --rs-few --only pp64tma,pp128tma,wide3tma \
  --problem 70B-fc2-m128,70B-fc2-m256,8B-o-m256,8B-o-m512,70B-o-m512,70B-o-m1024 > $OUT/parts.log 2>&1
echo "rc=$?" >> $OUT/parts.log
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
M=gpu__time_duration.sum,dram__bytes_read.sum,sm__cycles_active.avg,sm__cycles_active.max,lts__t_sector_hit_rate.pct
for kp in pp64tma:70B-fc2-m128 pp128tma:70B-fc2-m256; do
  timeout 100 $NCU --clock-control none -k regex:tpg_selftest --launch-count 8 --metrics $M \
    $S --no-perf --no-cases --rs-parts --rs-few --only ${kp%%:*} --problem ${kp##*:} > $OUT/ncu_${kp%%:*}.log 2>&1
  echo "rc=$?" >> $OUT/ncu_${kp%%:*}.log
done
grep -A40 "ring's parts" $OUT/parts.log | grep "^|"; tail -1 $OUT/parts.log
for k in pp64tma pp128tma; do grep -E "gpu__time|dram__bytes|sm__cycles|hit_rate|^rc" $OUT/ncu_$k.log; done
