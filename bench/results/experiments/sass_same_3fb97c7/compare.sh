#!/bin/bash
# cuobjdump and nvdisasm on PATH (this machine: a cuda-cuobjdump wheel and triton's nvdisasm)
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
git -C "$ROOT" worktree add -q /tmp/wt 3fb97c7 2>/dev/null; cd /tmp/wt
for f in $ROOT/build/generated/kernels/*.o; do
  K=$(basename $f .o)
  [ -f build/generated/kernels/$K.o ] || { cmd=$(cd $ROOT && ninja -t commands build/generated/kernels/$K.o | tail -1); (eval "$cmd") >/dev/null 2>&1; }
  a=$(cuobjdump -sass build/generated/kernels/$K.o 2>/dev/null | grep -E "^\s+/\*[0-9a-f]{4}\*/" | sed 's@/\*[0-9a-f]*\*/@@' | md5sum)
  b=$(cuobjdump -sass $f | grep -E "^\s+/\*[0-9a-f]{4}\*/" | sed 's@/\*[0-9a-f]*\*/@@' | md5sum)
  [ "$a" = "$b" ] && echo "same $K" || echo "DIFF $K"
done
echo done
