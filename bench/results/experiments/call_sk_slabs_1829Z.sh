#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_slabs.patch: the stream-K fix-up's row test
# (tpg_sk_slab_live: a split tile's sums move only for the rows it has) on two consumer warpgroups with one m64 slab
# each (x_wide_sk, 128x256) and two each (x_c256_sk, 256x128), at rows that end inside the first warp, the second
# warpgroup, the second slab and the second tile row; alpha / beta / C; the reference check and bitwise determinism.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R; fails=0
for shape in "12 1000 8192 2" "80 3000 8192 1" "130 1000 8192 1" "200 2000 8192 1" "16 5120 8192 1"; do
  set -- $shape
  for c in x_wide_sk_tp1 x_c256_sk_tp1; do
    timeout 30 build/tpgemm --config $c --devices 0 --m $1 --n $2 --k $3 --l $4 --alpha 0.5 --beta 1 \
      --iterations 5 --warmup-iterations 2 --timeout-ms 3000 > $R/${c}_m$1.log 2>&1
    rc=$?; [ $rc = 0 ] || fails=$((fails + 1))
    echo "$c m=$1 n=$2 k=$3 l=$4 rc=$rc $(grep -E '^Disposition|stream-K' $R/${c}_m$1.log | tr '\n' ' ' | cut -c1-120)"
  done
done
echo "failures: $fails"
cd $OUT && tar czf records.tgz r && rm -rf r
