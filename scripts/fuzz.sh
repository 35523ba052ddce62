#!/usr/bin/env bash
# Runs every libFuzzer harness of a FLIGHTREC_FUZZ=ON build for SECONDS each,
# seeded with tests/fuzz/corpus/<harness>/ (the committed corpus is never
# modified: new inputs go to a scratch copy). Any crash fails the run and is
# left in DIR/fuzz-artifacts/ to be committed as a regression file.
# The harnesses run FLIGHTREC_FUZZ_JOBS at a time (default: the cores), each
# single-threaded for its full SECONDS.
#   scripts/fuzz.sh BUILD_DIR [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:?build dir}
secs=${2:-30}
mapfile -t harnesses < <(find "$dir" -maxdepth 3 -type f -executable -name 'fuzz_*' ! -name 'fuzz_replay*' | sort)
if ((${#harnesses[@]} == 0)); then
  echo "fuzz: no harnesses in $dir (configure with -DFLIGHTREC_FUZZ=ON and clang)"; exit 1
fi
parallel=${FLIGHTREC_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
((parallel >= 1)) || parallel=1
mkdir -p "$dir/fuzz-artifacts"
run_one() {  # run_one HARNESS: fuzzes it, prints one line, exit status 0 when no crash
  local h=$1 name scratch tmp seeds log execs
  name=$(basename "$h")
  scratch="$dir/fuzz-scratch/$name"
  tmp="$dir/fuzz-scratch/$name.tmp"  # the harness's temporary files ($TMPDIR), removed after
  rm -rf "$scratch" "$tmp"; mkdir -p "$scratch" "$tmp"
  seeds=tests/fuzz/corpus/$name
  [[ -d $seeds ]] || seeds=tests/fuzz/corpus
  log="$dir/fuzz-artifacts/$name.log"
  if TMPDIR="$tmp" "$h" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$dir/fuzz-artifacts/$name-" "$scratch" "$seeds" >"$log" 2>&1; then
    execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "fuzz: $name ok, ${execs:-?} executions in ${secs}s"
    rm -rf "$tmp"; return 0
  fi
  echo "fuzz: $name FAILED (see $log)"; tail -30 "$log"
  rm -rf "$tmp"; return 1
}
# Batches of $parallel harnesses; each one's output is printed whole when the
# batch ends, in harness order.
status=0
for ((i = 0; i < ${#harnesses[@]}; i += parallel)); do
  pids=()
  for h in "${harnesses[@]:i:parallel}"; do
    run_one "$h" >"$dir/fuzz-artifacts/$(basename "$h").out" 2>&1 &
    pids+=($!)
  done
  for k in "${!pids[@]}"; do
    wait "${pids[k]}" || status=1
    cat "$dir/fuzz-artifacts/$(basename "${harnesses[i + k]}").out"
  done
done
exit $status
