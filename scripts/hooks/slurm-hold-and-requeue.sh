#!/bin/sh
# flightrec verdict hook for Slurm: on a hang with named culprits, drain the
# culprits' nodes (no new job lands there until an admin looks) and requeue
# the job, which then starts on other nodes from its last checkpoint.
#
#   NCCL_FLIGHTREC_ON_VERDICT=/opt/flightrec/share/flightrec/hooks/slurm-hold-and-requeue.sh
#   flightrec watch DIR --job "$SLURM_JOB_ID" --on-verdict-file ~/.flightrec-hook
#
# Only a `hang` is acted on: a `desync` is a bug in the program (requeueing
# runs into it again), `slow` and `healthy` need no action, `incomplete`
# names nobody. Culprits are host:pid pairs; the host is the node name the
# plugin recorded (gethostname, sanitized), which is Slurm's NodeName on
# most clusters.
#
# Nothing outside the job is ever drained: every culprit host must be a
# plain host name ([A-Za-z0-9._-], never a hostlist expression such as
# gpu[001-064]) and an exact member of the job's own node list
# (`scontrol show hostnames "$SLURM_JOB_NODELIST"`). When any culprit fails
# that check, or the node list cannot be read, no node is drained and the
# job is not requeued (exit 1): the evidence does not match this job.
#
# Settings (environment):
#   FLIGHTREC_HOOK_DRY_RUN=1      print the scontrol commands, run nothing
#   FLIGHTREC_SLURM_REQUEUE=0     drain only, do not requeue
#   FLIGHTREC_SLURM_JOB           the job to requeue (default SLURM_JOB_ID)
#   FLIGHTREC_SLURM_NODELIST      the job's node list (a hostlist expression;
#                                 default SLURM_JOB_NODELIST): for a sidecar
#                                 that does not run inside the job
# Needs: sh, scontrol (with the rights to drain nodes and requeue the job),
# grep, sort, tr.
set -eu

: "${FLIGHTREC_VERDICT:?run me from flightrec watch (FLIGHTREC_VERDICT is not set)}"
job=${FLIGHTREC_SLURM_JOB:-${SLURM_JOB_ID:-}}
nodelist=${FLIGHTREC_SLURM_NODELIST:-${SLURM_JOB_NODELIST:-}}

run() {
  if [ "${FLIGHTREC_HOOK_DRY_RUN:-0}" = 1 ]; then
    echo "dry run: $*"
  else
    echo "running: $*"
    "$@"
  fi
}

refuse() {
  printf 'not draining any node, not requeueing: %s\n' "$1" >&2
  exit 1
}

# A plain host name: what the plugin writes, and nothing scontrol would
# expand (no brackets, commas or spaces) or read as an option.
plain_host() {
  case $1 in
    '' | -* | *[!A-Za-z0-9._-]*) return 1 ;;
  esac
  return 0
}

if [ "$FLIGHTREC_VERDICT" != hang ]; then
  echo "verdict is $FLIGHTREC_VERDICT, not hang: nothing to do"
  exit 0
fi
if [ -z "${FLIGHTREC_CULPRITS:-}" ]; then
  echo "hang without a single culprit (all_stuck or deadlock): not draining any node"
  exit 0
fi
case $job in
  '') ;;
  *[!0-9_]* | _* | *_) refuse "job id '$job' is not a Slurm job id" ;;
esac

# The job's own nodes, one per line.
[ -n "$nodelist" ] ||
  refuse "no node list to check the culprits against (SLURM_JOB_NODELIST, FLIGHTREC_SLURM_NODELIST)"
members=$(scontrol show hostnames "$nodelist") ||
  refuse "scontrol show hostnames failed on the node list '$nodelist'"
[ -n "$members" ] || refuse "the node list '$nodelist' names no node"

# Every culprit host, checked; each node once, however many culprit
# processes it runs. All or nothing: one bad culprit drains nothing.
nodes=''
while IFS= read -r culprit; do
  [ -n "$culprit" ] || continue
  host=${culprit%:*}
  pid=${culprit##*:}
  case $pid in
    '' | *[!0-9]*) refuse "culprit '$culprit' is not host:pid" ;;
  esac
  plain_host "$host" || refuse "culprit host '$host' is not a plain host name"
  printf '%s\n' "$members" | grep -qxF -e "$host" ||
    refuse "culprit host '$host' is not a node of this job ($nodelist)"
  nodes=$(printf '%s\n%s\n' "$nodes" "$host" | grep -v '^$' | sort -u)
done <<EOF
$(printf '%s\n' "$FLIGHTREC_CULPRITS" | tr '\t' ' ' | tr -s ' ' '\n')
EOF

[ -n "$nodes" ] || refuse "FLIGHTREC_CULPRITS names no host"

# $nodes holds checked plain host names, one per line.
while IFS= read -r node; do
  [ -n "$node" ] || continue
  run scontrol update NodeName="$node" State=DRAIN \
    Reason="flightrec: job ${job:-?} hung on this node (${FLIGHTREC_REPORT:-see the verdict})" \
    </dev/null
done <<EOF
$nodes
EOF

if [ "${FLIGHTREC_SLURM_REQUEUE:-1}" = 0 ]; then
  echo "FLIGHTREC_SLURM_REQUEUE=0: not requeueing job ${job:-?}"
elif [ -z "$job" ]; then
  echo "no job id (SLURM_JOB_ID, FLIGHTREC_SLURM_JOB): not requeueing" >&2
  exit 1
else
  run scontrol requeue "$job"
fi
