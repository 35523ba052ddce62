#!/usr/bin/env bash
# Writes the inputs of a new golden version folder (tests/golden/v<M>.<m>/)
# from the current build: two rings and rank 0's exit dump of a healthy
# emulated 2-rank job whose `tp0` region has wrapped (175 ops in 64 slots),
# then the expectations (regenerate.sh). Run it once per format minor that
# changes the layout; never for an existing folder.
#   tests/golden/make-version.sh [BUILD_DIR] [EMULATOR OPTIONS...]
set -euo pipefail
cd "$(dirname "$0")"
build=$(cd "${1:-../../build}" && pwd)
shift || true
fr=$build/bin/flightrec
minor=$(sed -n 's/^constexpr uint16_t kFormatMinor = \([0-9]*\);/\1/p' ../../include/flightrec/record_format.h)
major=$(sed -n 's/^constexpr uint16_t kFormatMajor = \([0-9]*\);/\1/p' ../../include/flightrec/record_format.h)
dest=v$major.$minor
[[ -e $dest ]] && { echo "$dest exists: golden files are never rewritten"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
NCCL_PROFILER_PLUGIN=$build/lib/libnccl-profiler-flightrec.so \
  NCCL_FLIGHTREC_DIR=$work/r NCCL_FLIGHTREC_DUMP_DIR=$work/d \
  NCCL_FLIGHTREC_RECORDS=64 NCCL_FLIGHTREC_MAX_COMMS=4 NCCL_FLIGHTREC_DUMP_ON_EXIT=1 \
  "$build/bin/flightrec-emu" run --ranks 2 --tp 2 --ops 200 --step-us 50 --job-id golden \
  --job-dir "$work/job" --summary "$work/summary.json" "$@"
mkdir "$dest"
# Rank r's pid from the emulator's summary names its ring and dump.
for r in 0 1; do
  pid=$(jq -r ".ranks[] | select(.rank == $r) | .pid" "$work/summary.json")
  cp "$(ls "$work"/r/*-"$pid".ring)" "$dest/rank$r.ring"
done
pid0=$(jq -r '.ranks[] | select(.rank == 0) | .pid' "$work/summary.json")
cp "$(ls "$work"/d/*-"$pid0"-*.frdump | head -1)" "$dest/rank0.frdump"
bash regenerate.sh "$build"
echo "wrote $dest; review and commit it with its expectations"
