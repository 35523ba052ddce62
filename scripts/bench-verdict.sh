#!/usr/bin/env bash
# Time to verdict: emulated jobs (flightrec-emu, the real plugin) hang with
# each fault the emulator injects, at 16 and 64 ranks; the plugin spawns
# `flightrec watch` by itself. Measured per job: from the moment the stuck op
# began (the earliest --mark-op enqueue of the faulty op over all ranks, in
# coord.shm) to the moment the headline line appeared in the job's NCCL log
# (flightrec-emu --until-log, seen by the launcher within 20 ms). The count
# mismatch does not hang an emulated job (launches pair by order, as in
# NCCL): there the trigger a timed-out rank would leave is written
# (`flightrec trigger --reason timeout`) 4 s after the job started, and the
# clock starts when the trigger is written.
# Target (issue 12): NCCL_FLIGHTREC_TIMEOUT_S + 10 s.
#
#   scripts/bench-verdict.sh [OUT_DIR]        (default: build/bench-verdict)
#
# Knobs:
#   FLIGHTREC_BUILD=DIR                 build dir with the plugin, CLI, emulator [build]
#   FLIGHTREC_VERDICT_SIZES="16 64"     job sizes (ranks)
#   FLIGHTREC_VERDICT_FAULTS="stuck skip kill count gpuhang"
#   FLIGHTREC_VERDICT_REPS=3            jobs per fault and size
#   FLIGHTREC_VERDICT_TIMEOUT_S=5       NCCL_FLIGHTREC_TIMEOUT_S of the jobs
# Never part of ctest (one job per repetition, up to a minute each).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${FLIGHTREC_BUILD:-$ROOT/build}"
OUT="$(mkdir -p "${1:-$BUILD/bench-verdict}" && cd "${1:-$BUILD/bench-verdict}" && pwd)"
SIZES="${FLIGHTREC_VERDICT_SIZES:-16 64}"
FAULTS="${FLIGHTREC_VERDICT_FAULTS:-stuck skip kill count gpuhang}"
REPS="${FLIGHTREC_VERDICT_REPS:-3}"
TIMEOUT_S="${FLIGHTREC_VERDICT_TIMEOUT_S:-5}"
EMU="$BUILD/bin/flightrec-emu"
CLI="$BUILD/bin/flightrec"

for f in "$EMU" "$CLI" "$BUILD/lib/libnccl-profiler-flightrec.so"; do
  [[ -e $f ]] || { echo "bench-verdict: $f missing; build first (cmake --build $BUILD)" >&2; exit 2; }
done

# fault spec and op per size (the op also marks the start), as in the tests:
# 16 ranks --tp 4, 64 ranks --tp 8, 8 ranks per node.
spec() {
  local size=$1 fault=$2
  case "$size:$fault" in
    16:stuck) echo "stuck:rank=5:op=241 241" ;;
    16:skip) echo "skip:rank=3:op=164 164" ;;
    16:kill) echo "kill:rank=9:op=205 205" ;;
    16:count) echo "mismatch:rank=12:op=43:field=count 43" ;;
    16:gpuhang) echo "gpu-hang:rank=14:op=146 146" ;;
    64:stuck) echo "stuck:rank=37:op=213 213" ;;
    64:skip) echo "skip:rank=50:op=145 145" ;;
    64:kill) echo "kill:rank=45:op=174 174" ;;
    64:count) echo "mismatch:rank=29:op=43:field=count 43" ;;
    64:gpuhang) echo "gpu-hang:rank=23:op=139 139" ;;
    *) echo "bench-verdict: no spec for $size ranks, fault $fault" >&2; exit 2 ;;
  esac
}

# One job; prints the seconds from the start of the stuck op to the headline,
# or "none" when no headline came.
run_job() {
  local size=$1 fault=$2 rep=$3
  local dir="$OUT/$size-$fault-$rep" job="bv-$size-$fault-$rep"
  rm -rf "$dir" && mkdir -p "$dir/rings"
  local s op tp ops=600 step=20
  read -r s op <<<"$(spec "$size" "$fault")"
  tp=$((size >= 64 ? 8 : 4))
  local trigger_ns=""
  if [[ $fault == count ]]; then
    ops=100000 step=2000
    ( sleep 4; date +%s%N >"$dir/trigger_ns"; "$CLI" trigger "$dir/rings" --job "$job" --reason timeout >/dev/null ) &
  fi
  env NCCL_PROFILER_PLUGIN=flightrec NCCL_DEBUG=WARN LD_LIBRARY_PATH="$BUILD/lib" \
    NCCL_FLIGHTREC_DIR="$dir/rings" NCCL_FLIGHTREC_TIMEOUT_S="$TIMEOUT_S" NCCL_FLIGHTREC_JOB_ID="$job" \
    "$EMU" run --ranks "$size" --tp "$tp" --ranks-per-node 8 --ops "$ops" --step-us "$step" \
    --fault "$s" --mark-op "$op" --job-dir "$dir/job" --job-id "$job" --log-file "$dir/nccl.log" \
    --until-log "flightrec: verdict:" --hang-timeout-s $((TIMEOUT_S + 60)) \
    --summary "$dir/summary.json" >/dev/null 2>"$dir/stderr.log" || true
  wait
  [[ -f $dir/trigger_ns ]] && trigger_ns=$(cat "$dir/trigger_ns")
  python3 - "$dir/summary.json" "$trigger_ns" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
seen = s.get("until_log_wall_ns", 0)
if sys.argv[2]:
    start = int(sys.argv[2])
else:
    marks = [r["mark_op_wall_ns"] for r in s["ranks"] if r["mark_op_wall_ns"]]
    start = min(marks) if marks else 0
print("none" if not seen or not start else "%.2f" % ((seen - start) / 1e9))
EOF
  # The job's `watch` may still be leaving (it exits once it sees its parent
  # rank gone): keep the logs, drop the rings and dumps when it allows.
  rm -rf "$dir/rings" "$dir/job" 2>/dev/null || true
}

echo "time to verdict (s) from the stuck op's start to the headline in the job's log;"
echo "NCCL_FLIGHTREC_TIMEOUT_S=$TIMEOUT_S, target <= $((TIMEOUT_S + 10)) s; $REPS job(s) each; $(nproc) cores"
printf '%-6s %-8s %8s %8s  %s\n' ranks fault median worst runs
for size in $SIZES; do
  for fault in $FAULTS; do
    times=()
    for rep in $(seq 1 "$REPS"); do times+=("$(run_job "$size" "$fault" "$rep")"); done
    python3 - "$size" "$fault" "${times[@]}" <<'EOF'
import statistics, sys
size, fault, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
ok = [float(t) for t in runs if t != "none"]
med = "%.2f" % statistics.median(ok) if ok else "-"
worst = "none" if len(ok) < len(runs) else "%.2f" % max(ok)
print("%-6s %-8s %8s %8s  %s" % (size, fault, med, worst, " ".join(runs)))
EOF
  done
done
echo "per-job logs and summaries: $OUT"
