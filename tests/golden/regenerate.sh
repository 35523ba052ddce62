#!/usr/bin/env bash
# Rewrites the golden expectations of every version folder from the current
# `flightrec` build. Only for an intended output change; review the diff
# before committing. The rings and dumps themselves are never rewritten.
#   tests/golden/regenerate.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")"
fr=$(cd "${1:-../../build}" && pwd)/bin/flightrec
for v in v*/; do
  v=${v%/}
  for f in rank0.ring rank0.frdump rank1.ring; do
    "$fr" show --json "$v/$f" >"$v/$f.show.json"
  done
  # The inputs by name (as tests/golden/CMakeLists.txt does): the folder also
  # holds the expectations, which are no inputs. The analysis time is fixed as
  # tests/golden/CMakeLists.txt fixes it.
  SOURCE_DATE_EPOCH=1764000000 "$fr" analyze --format json "$v/rank0.frdump" "$v/rank0.ring" \
    "$v/rank1.ring" >"$v/analyze.json" || true  # exit 1 = findings
  "$fr" timeline "$v/rank0.frdump" "$v/rank0.ring" "$v/rank1.ring" >"$v/timeline.json"
done
echo "regenerated; review: git diff tests/golden"
