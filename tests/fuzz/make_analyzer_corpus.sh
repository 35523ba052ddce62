#!/usr/bin/env bash
# Regenerates the seed corpus of fuzz_analyzer_inputs from real files: small
# rings and dumps written by the real plugin under flightrec-emu, several
# jobs (healthy, hang, desync, a killed rank), joined with the harness's file
# separator (harnesses.h), up to 4 files per seed.
#   tests/fuzz/make_analyzer_corpus.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
out=$(cd "$(dirname "$0")" && pwd)/corpus/fuzz_analyzer_inputs
work=$(mktemp -d /tmp/flightrec-corpus-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

emu() {  # emu NAME ARGS...: one small job, files in $work/NAME/rings
  local name=$1; shift
  mkdir -p "$work/$name/rings"
  env NCCL_PROFILER_PLUGIN=flightrec LD_LIBRARY_PATH="$build/lib" \
    NCCL_FLIGHTREC_DIR="$work/$name/rings" NCCL_FLIGHTREC_RECORDS=64 NCCL_FLIGHTREC_MAX_COMMS=3 \
    NCCL_FLIGHTREC_TIMEOUT_S=0.5 NCCL_FLIGHTREC_JOB_ID="$name" \
    "$build/bin/flightrec-emu" run --job-dir "$work/$name/job" --summary /dev/null \
    --ranks 4 --tp 2 --ranks-per-node 2 --step-us 5 --hang-timeout-s 20 "$@" >/dev/null 2>&1 || true
}

seed() {  # seed NAME FILE...: joins up to 4 files into one corpus entry
  local name=$1; shift
  : >"$out/$name"
  local first=1
  for f in "$@"; do
    ((first)) || printf 'FRSPLIT\n' >>"$out/$name"
    cat "$f" >>"$out/$name"
    first=0
  done
}

emu healthy --ops 40
emu hang --ops 64 --fault stuck:rank=1:op=30 --until-dumps 3
emu desync --ops 40 --fault mismatch:rank=2:op=20:field=count
emu killed --ops 4000 --fault kill:rank=3:op=25
emu dtype --ops 40 --fault mismatch:rank=2:op=17:field=datatype-same-bytes

mapfile -t hd < <(ls "$work"/healthy/rings/*.frdump)
mapfile -t gd < <(ls "$work"/hang/rings/*.frdump)
mapfile -t gr < <(ls "$work"/hang/rings/*.ring)
mapfile -t dd < <(ls "$work"/desync/rings/*.frdump)
mapfile -t kr < <(ls "$work"/killed/rings/*.ring)
mapfile -t td < <(ls "$work"/dtype/rings/*.frdump)

seed healthy_dumps "${hd[@]:0:4}"
seed hang_dumps "${gd[@]:0:4}"
seed hang_ring_and_dumps "${gr[0]}" "${gd[@]:0:3}"
seed desync_dumps "${dd[@]:0:4}"
seed killed_rings "${kr[@]:0:2}"
seed dtype_same_bytes_dumps "${td[@]:0:4}"
seed one_dump "${hd[0]}"
seed two_jobs "${hd[0]}" "${dd[0]}" "${gd[0]}"
ls -l "$out"
