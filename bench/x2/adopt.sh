#!/usr/bin/env bash
# After an x2 call, here: its files into the repository as bench/x2/README.md ("After the calls") says, so that a
# session that gets the machine late loses no record to a hurried copy. Run it once per call, right after the call and
# before anything changes the tree:
#   bash bench/x2/adopt.sh FILES_AT [--publish]
# FILES_AT is the reply's folder (records.tgz, summary.txt, and what the call copied beside them). The script
#   - reads records/provenance.txt from records.tgz (the call's script, its date, the tree hash) and refuses, writing
#     nothing, where that hash is not the working tree's (`bash bench/x2/tree_hash.sh`): adopt from the commit that ran;
#   - copies every file of FILES_AT into bench/results/experiments/x2_<HHMM>Z_<script>/ (refused if it exists);
#   - where the call left a tp2.json, writes verdict.py's reading of it there (--switched for call 4);
#   - with --publish (the call whose defaults the repository keeps: call 4 after a switch, else call 1; call 2 for
#     tier 2): tp2.json and tp2.png into bench/results/ and BENCHMARKS.md's tp2 table by report_tp.py, tier2.json
#     into bench/results/;
#   - prints what stays hand-kept.
# Exit status: 0 done, 1 refused (nothing written), 2 usage.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
usage() { echo "usage: bash bench/x2/adopt.sh FILES_AT [--publish]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
src=$1 publish=0
[ $# -eq 2 ] && { [ "$2" = --publish ] || usage; publish=1; }
refuse() { echo "adopt: $*; nothing written" >&2; exit 1; }
[ -f "$src/records.tgz" ] || refuse "$src/records.tgz not found (the reply's files_at folder?)"

prov=$(tar -xzOf "$src/records.tgz" records/provenance.txt 2>/dev/null) || refuse "records.tgz holds no provenance.txt"
script=$(sed -n 1p <<<"$prov" | awk '{print $1}')
when=$(sed -n 2p <<<"$prov")
ran=$(grep -m1 '^tree ' <<<"$prov" | awk '{print $2}')
[ -n "$script" ] && [ -n "$ran" ] || refuse "provenance.txt lacks the script or the tree line"
stamp=$(date -u -d "$when" +%H%MZ 2>/dev/null) || refuse "provenance.txt's date '$when' does not parse"
here=$(bash bench/x2/tree_hash.sh | awk '{print $2}')
[ "$ran" = "$here" ] || refuse "the call ran tree $ran, the working tree is $here: adopt from the commit that ran"

name=$(basename "$script" .sh)
dest=bench/results/experiments/x2_${stamp}_$name
[ -e "$dest" ] && refuse "$dest exists"
mkdir -p "$dest"
find "$src" -maxdepth 1 -type f -exec cp {} "$dest"/ \;
echo "records: $dest ($(find "$dest" -type f | wc -l) files; $name, $when, tree $ran)"

switched=()
[ "$name" = call4_switch ] && switched=(--switched)
if [ -f "$src/tp2.json" ]; then
    python3 bench/x2/verdict.py "${switched[@]}" "$src/tp2.json" >"$dest/verdict.txt"
    cat "$dest/verdict.txt"
fi

if [ "$publish" = 1 ]; then
    if [ -f "$src/tp2.json" ]; then
        cp "$src/tp2.json" bench/results/tp2.json
        [ -f "$src/tp2.png" ] && cp "$src/tp2.png" bench/results/tp2.png
        python3 bench/report_tp.py bench/results/tp2.json
        echo "published: bench/results/tp2.json, tp2.png, BENCHMARKS.md's tp2 table"
    fi
    if [ -f "$src/tier2.json" ]; then
        cp "$src/tier2.json" bench/results/tier2.json
        echo "published: bench/results/tier2.json"
    fi
fi
cat <<EOF
hand-kept, still to do: a row for $dest in bench/results/experiments/README.md; with --publish, the prose under
BENCHMARKS.md's tp2 table (the run's date, the target paragraph) or its Tier-2 section, and README's "Where it stands"
(the TP = 2 row, the points not yet met); the closing note (verdict.txt above; the timeout point is call 1's
gpu_pytest_timeout.log in records.tgz).
EOF
