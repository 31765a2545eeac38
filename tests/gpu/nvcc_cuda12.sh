#!/usr/bin/env bash
# An nvcc for the kernel self-test whose GEMM instances get their device code from a CUDA 12 release, so that a GPU
# can run what 12.4-12.8 would build (templates/kernels/cuda12.h) next to the nvcc 13 build, in the same harness:
#
#   NVCC=tests/gpu/nvcc_cuda12.sh SELFTEST_OUT=build/selftest124 bash tests/gpu/kernel_selftest.sh
#
# For tests/gpu/selftest_instance.cu it runs nvcc's own steps (nvcc -dryrun), with one change: the PTX that nvcc's
# front end wrote is replaced by the release's NVRTC build of the same source and -D / -I flags, and assembled by the
# release's ptxas (tests/toolkit_floor.py fetches both from PyPI into build/toolkit-floor). The host side, every other
# file and the link are nvcc's as usual. TPG_CUDA_RELEASE picks the release (default 12.4), NVCC_REAL the nvcc.
# Built here (no GPU needed). On an H200 (2026-12-05, bench/results/experiments/cuda12_selftest_1207Z/) such a binary
# passed all 435 cases of the shipped kernels' twins, after templates/kernels/cuda12.h's tpg_stage (before it, every
# 12.4-built kernel faulted at its first TMA: cuda12_selftest_1017Z/).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
real="${NVCC_REAL:-nvcc}"
release="${TPG_CUDA_RELEASE:-12.4}"

src="" prev="" verbose=0 opts=()
for a in "$@"; do
    case "$prev" in
    -c) src="$a" ;;
    -I) opts+=("-I$a") ;;
    -Xptxas) [ "$a" = -v ] && verbose=1 ;;
    esac
    case "$a" in -D*|-I?*) opts+=("$a") ;; esac
    prev="$a"
done
case "$src" in
*/selftest_instance.cu) ;;
*) exec "$real" "$@" ;;
esac
case " $* " in
*TPG_SPREAD_PUSHES=1*) # its debug variables sit in an anonymous namespace, whose internal names NVRTC spells otherwise
    echo "nvcc_cuda12.sh: $src with TPG_SPREAD_PUSHES: built by $real" \
        "(its __device__ variables' names would differ)" >&2
    exec "$real" "$@" ;;
esac

# The parameter block holds CUtensorMaps, whose alignment the host's cuda.h sets (12.x: 64, 13: 128): the device code
# must lay it out as the host side does
cuda_h="$(dirname "$(command -v "$real")")/../include/cuda.h"
align="$(grep -A3 'typedef struct CUtensorMap_st' "$cuda_h" | grep -oE 'alignas\([0-9]+\)' | head -1 | tr -dc 0-9)"
[ -n "$align" ] || { echo "nvcc_cuda12.sh: no CUtensorMap alignment in $cuda_h" >&2; exit 1; }
opts+=("-DTPG_SHIM_TENSORMAP_ALIGN=$align")

# nvcc's steps as a script, in a private temporary directory (nvcc's own clean-up is not among the steps); its ptxas
# step becomes the release's NVRTC + ptxas over the same files
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
steps="$work/steps.sh"
export TMPDIR="$work"
"$real" -dryrun "$@" 2>&1 | sed -n 's/^#\$ //p' | while IFS= read -r line; do
    if [[ "$line" == ptxas\ * ]]; then
        ptx="$(grep -oE '"[^"]+\.ptx"' <<< "$line" | tr -d '"')"
        cubin="$(grep -oE '"[^"]+\.cubin"' <<< "$line" | tr -d '"')"
        if [ -z "$ptx" ] || [ -z "$cubin" ]; then
            echo "echo 'nvcc_cuda12.sh: cannot read the ptxas step' >&2; exit 1"; continue
        fi
        printf 'python3 %q --cubin %q %q %q %q %q %q' "$root/tests/toolkit_floor.py" "$release" \
            "$root/build/toolkit-floor" "$src" "$ptx" "$cubin" "$verbose"
        printf ' %q' "${opts[@]}"
        printf '\n'
    elif [[ "$line" == rm\ * ]]; then # nvcc's clean-up of files that need not exist here
        printf 'rm -f %s\n' "${line#rm }"
    elif [[ "$line" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then # nvcc's variables, as text (some are not shell)
        printf 'export %s=%q\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
    else
        printf '%s\n' "$line"
    fi
done > "$steps"
grep -q -- "--cubin" "$steps" || { echo "nvcc_cuda12.sh: nvcc -dryrun showed no ptxas step" >&2; exit 1; }
bash -e "$steps"
