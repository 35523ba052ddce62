#!/bin/sh
# flightrec verdict hook for Slurm: on a hang with named culprits, drain the
# culprits' nodes (no new job lands there until an admin looks) and requeue
# the job, which then starts on other nodes from its last checkpoint.
#
#   NCCL_FLIGHTREC_ON_VERDICT=/opt/flightrec/share/flightrec/hooks/slurm-hold-and-requeue.sh
#   flightrec watch DIR --job "$SLURM_JOB_ID" --on-verdict .../slurm-hold-and-requeue.sh
#
# Only a `hang` is acted on: a `desync` is a bug in the program (requeueing
# runs into it again), `slow` and `healthy` need no action, `incomplete`
# names nobody. Culprits are host:pid pairs; the host is the node name the
# plugin recorded (gethostname, sanitized), which is Slurm's NodeName on
# most clusters.
#
# Settings (environment):
#   FLIGHTREC_HOOK_DRY_RUN=1      print the scontrol commands, run nothing
#   FLIGHTREC_SLURM_REQUEUE=0     drain only, do not requeue
#   FLIGHTREC_SLURM_JOB           the job to requeue (default SLURM_JOB_ID,
#                                 else FLIGHTREC_JOB_ID)
# Needs: sh, scontrol (with the rights to drain nodes and requeue the job).
set -eu

: "${FLIGHTREC_VERDICT:?run me from flightrec watch (FLIGHTREC_VERDICT is not set)}"
job=${FLIGHTREC_SLURM_JOB:-${SLURM_JOB_ID:-${FLIGHTREC_JOB_ID:-}}}

run() {
  if [ "${FLIGHTREC_HOOK_DRY_RUN:-0}" = 1 ]; then
    echo "dry run: $*"
  else
    echo "running: $*"
    "$@"
  fi
}

if [ "$FLIGHTREC_VERDICT" != hang ]; then
  echo "verdict is $FLIGHTREC_VERDICT, not hang: nothing to do"
  exit 0
fi
if [ -z "${FLIGHTREC_CULPRITS:-}" ]; then
  echo "hang without a single culprit (all_stuck or deadlock): not draining any node"
  exit 0
fi

# Each node once, however many culprit processes it runs.
nodes=$(printf '%s\n' "$FLIGHTREC_CULPRITS" | tr ' ' '\n' | sed 's/:[0-9]*$//' | sort -u)
for node in $nodes; do
  run scontrol update NodeName="$node" State=DRAIN \
    Reason="flightrec: job $job hung on this node (${FLIGHTREC_REPORT:-see the verdict})"
done

if [ "${FLIGHTREC_SLURM_REQUEUE:-1}" = 0 ]; then
  echo "FLIGHTREC_SLURM_REQUEUE=0: not requeueing job $job"
elif [ -z "$job" ]; then
  echo "no job id (SLURM_JOB_ID, FLIGHTREC_JOB_ID): not requeueing" >&2
  exit 1
else
  run scontrol requeue "$job"
fi
