#!/usr/bin/env bash
# The folders keep to their layers (docs/architecture.md "Layers"): no
# include points up the layer list except those scripts/layers.allow still
# lists from before the layering, and that list only shrinks (a line whose
# include is gone fails too, so it is crossed off). Reads text; runs nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$(python3 "$SRC/scripts/layers.py" --check 2>&1) && rc=0 || rc=$?
echo "$out"
check "no new upward include, no stale allowance" [ "$rc" -eq 0 ]

# the checker bites: an upward include planted in a copy of the tree is found
mkdir -p "$T_TMP/tree/scripts" "$T_TMP/tree/util"
cp "$SRC/scripts/layers.py" "$SRC/scripts/layers.allow" "$T_TMP/tree/scripts/"
for d in util model locks backends faults checkers reports harness; do
    [ -d "$SRC/$d" ] && cp -r "$SRC/$d" "$T_TMP/tree/"
done
printf '#include "harness/run.h"\n' >>"$T_TMP/tree/util/err.c"
planted=$(python3 "$T_TMP/tree/scripts/layers.py" --check 2>&1) && prc=0 || prc=$?
check "a planted util -> harness include fails the check" [ "$prc" -eq 1 ]
check "and is named" grep -q "util/err.c:.*util -> harness" <<<"$planted"

echo "$T_PASS passed, $T_FAIL failed"
[ "$T_FAIL" -eq 0 ]
