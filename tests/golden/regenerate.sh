#!/usr/bin/env bash
# Rewrites the golden expectations from the current `flightrec` build.
# Only for an intended output change; review the diff before committing.
#   tests/golden/regenerate.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")"
fr=${1:-../../build}/bin/flightrec
for f in rank0.ring rank0.frdump rank1.ring; do
  "$fr" show --json "v1.0/$f" >"v1.0/$f.show.json"
done
# The inputs by name (as tests/golden/CMakeLists.txt does): the folder also
# holds the expectations, which are no inputs. The analysis time is fixed as
# tests/golden/CMakeLists.txt fixes it.
SOURCE_DATE_EPOCH=1764000000 "$fr" analyze --format json v1.0/rank0.frdump v1.0/rank0.ring v1.0/rank1.ring \
  >v1.0/analyze.json || true  # exit 1 = findings
"$fr" timeline v1.0/rank0.frdump v1.0/rank0.ring v1.0/rank1.ring >v1.0/timeline.json
echo "regenerated; review: git diff tests/golden"
