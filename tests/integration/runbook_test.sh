#!/usr/bin/env bash
# Runs docs/runbook.md's own commands (its ```bash blocks, taken from the
# doc) against an emulated hung job: collection before cancelling (srun,
# pdsh and the ssh + tar loop, with the cluster's launchers standing in for
# one node: this machine), `flightrec trigger`, the analyze commands and
# the `set -e` recipe. Fails when a block fails or leaves no report.
#   runbook_test.sh BUILD_DIR RUNBOOK
set -uo pipefail
build=$1 runbook=$2
work=$(mktemp -d /tmp/flightrec-runbook-XXXXXX)
emu_pid=
cleanup() {
  if [ -n "$emu_pid" ]; then kill "$emu_pid" 2>/dev/null; wait "$emu_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "runbook_test: $*" >&2; exit 1; }
export PATH="$build/bin:$PATH"

# The ```bash block of the runbook that contains $1.
block() {
  awk -v want="$1" '
    /^```bash$/ { inside = 1; text = ""; next }
    /^```$/ && inside { inside = 0; if (index(text, want)) { printf "%s", text; found = 1; exit } next }
    inside { text = text $0 "\n" }
    END { if (!found) exit 1 }' "$runbook" || fail "no bash block with '$1' in $runbook"
}

# The cluster, one node (this machine): launchers run their command here.
cat >"$work/cluster.sh" <<'STUBS'
squeue() { case "$*" in *%D*) echo 1 ;; *) hostname ;; esac; }
scontrol() { echo "$3"; }                        # scontrol show hostnames LIST
srun() { while [ "${1#-}" != "$1" ]; do shift; done; "$@"; }
pdsh() { shift 2; sh -c "$*"; }                  # pdsh -w HOSTS CMD
ssh() { shift; sh -c "$*"; }                     # ssh HOST CMD
STUBS

# The hung job: world rank 3 stuck outside NCCL, watchdog timeout far away
# (no dumps yet), rings node-local.
JOB=4242
RINGS=$work/node-local/flightrec
mkdir -p "$RINGS"
env NCCL_PROFILER_PLUGIN=flightrec LD_LIBRARY_PATH="$build/lib" NCCL_FLIGHTREC_DIR="$RINGS" \
  NCCL_FLIGHTREC_JOB_ID=$JOB NCCL_FLIGHTREC_TIMEOUT_S=600 \
  flightrec-emu run --ranks 4 --tp 2 --ranks-per-node 2 --ops 400 --step-us 200 --job-id $JOB \
  --job-dir "$work/job" --fault stuck:rank=3:op=20 --hang-timeout-s 120 \
  --summary "$work/summary.json" >"$work/emu.out" 2>&1 &
emu_pid=$!
for _ in $(seq 1 600); do
  [ "$(ls "$RINGS"/*.ring 2>/dev/null | wc -l)" -ge 4 ] && break
  sleep 0.1
done
[ "$(ls "$RINGS"/*.ring 2>/dev/null | wc -l)" -ge 4 ] || fail "the emulated job wrote no 4 rings"
sleep 2  # the stuck op ages past the analyzer's 1 s

run() {  # run NAME SETE SNIPPET: one block in a fresh shell with the job's variables
  local name=$1 sete=$2 snippet=$3
  # The doc's setup block with its placeholders replaced by this job's.
  local setup
  setup=$(block 'JOB=123456')
  setup=${setup/JOB=123456/JOB=$JOB}
  setup=${setup/RINGS=\/tmp\/flightrec-\$(id -u)/RINGS=$RINGS}
  setup=${setup/OUT=\/shared\/fs/OUT=$work\/shared}
  if ! bash -c "$sete
. '$work/cluster.sh'
cd '$work'
$setup
DUMPS='$RINGS'
$snippet" >"$work/$name.out" 2>&1; then
    cat "$work/$name.out" >&2
    fail "the runbook's $name commands failed"
  fi
}

run srun "set -e" "$(block 'srun --jobid=')"
run pdsh "set -e" "$(block 'pdsh -w')"
run ssh "set -eo pipefail" "$(block 'ssh "$h"')"
out=$work/shared/flightrec-$JOB
host=$(hostname)
[ "$(ls "$out/$host"/flightrec-$JOB-*.ring | wc -l)" -eq 4 ] || fail "srun/pdsh/ssh collected no 4 rings"
[ -s "$work/flightrec-$JOB.tgz" ] || fail "no flightrec-$JOB.tgz"

run trigger "set -e" "$(block 'flightrec trigger "$DUMPS"')"
[ "$(ls "$RINGS"/flightrec-$JOB-*.frdump | wc -l)" -eq 4 ] || fail "the trigger made no 4 dumps"
grep -q '^HANG: ' "$work/trigger.out" || fail "the triggered snapshot does not read as a hang"

run analyze "" "$(block 'flightrec analyze "$OUT"  ')"
for f in report.html report.md report.json trace.json; do
  [ -s "$work/$f" ] || fail "the analyze commands wrote no $f"
done
run set-e "" "$(block 'set -e')"
grep -q '"title": "HANG in job 4242: ' "$work/report.json" || fail "report.json has no ticket title"
echo "runbook_test: every runbook block ran"
