#!/usr/bin/env bash
# One hash of the sources an x2 call builds and runs (runtime, templates, generated, generator, tuned, bench and tests
# code, schedules.yaml, build.ninja), so that a call's records name the tree they came from: common.sh writes it into
# records/provenance.txt on the device, and the same command here says whether a commit holds that tree.
# Usage: bash bench/x2/tree_hash.sh   (from anywhere; prints the hash and the file count)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
list=$(find runtime templates generated generator tuned bench tests schedules.yaml build.ninja -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.py' -o -name '*.sh' -o -name '*.j2' \
    -o -name '*.yaml' -o -name '*.map' -o -name '*.ninja' -o -name '*.md' \) -not -path 'bench/results/*' \
    -not -path '*/__pycache__/*' | LC_ALL=C sort)
echo "tree $(echo "$list" | xargs sha256sum | sha256sum | cut -c1-16) ($(echo "$list" | wc -l) files)"
