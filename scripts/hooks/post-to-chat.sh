#!/bin/sh
# flightrec verdict hook: post the verdict to a chat channel through an
# incoming webhook (Slack, Mattermost, Rocket.Chat and Teams' Slack-compatible
# endpoints all take {"text": "..."}).
#
#   flightrec watch DIR --on-verdict /opt/flightrec/share/flightrec/hooks/post-to-chat.sh
#   NCCL_FLIGHTREC_ON_VERDICT=/opt/flightrec/share/flightrec/hooks/post-to-chat.sh
#
# Settings (environment):
#   FLIGHTREC_CHAT_WEBHOOK   the webhook URL (required unless dry run)
#   FLIGHTREC_CHAT_MAX_CHARS longest message sent (default 3500; the Markdown
#                            report is cut there, the full report path is given)
#   FLIGHTREC_HOOK_DRY_RUN=1 print the request instead of sending it
# Needs: sh, awk, curl. Exit status: curl's (0 when the post was accepted).
set -eu

: "${FLIGHTREC_VERDICT:?run me from flightrec watch (FLIGHTREC_VERDICT is not set)}"
max=${FLIGHTREC_CHAT_MAX_CHARS:-3500}
report_md=${FLIGHTREC_REPORT_MD:-}

# The message: one line saying where the files are, then the Markdown
# report (which starts with the headline), cut to the limit.
{
  printf 'flightrec: job %s, verdict **%s**, culprits: %s\n' \
    "${FLIGHTREC_JOB_ID:-?}" "$FLIGHTREC_VERDICT" "${FLIGHTREC_CULPRITS:-none named}"
  printf 'Reports: %s (and .html, .json beside it)\n\n' "${report_md:-?}"
  if [ -r "$report_md" ]; then cat "$report_md"; else printf '%s\n' "${FLIGHTREC_HEADLINE:-}"; fi
} >"${TMPDIR:-/tmp}/flightrec-chat.$$"
trap 'rm -f "${TMPDIR:-/tmp}/flightrec-chat.$$"' EXIT

# {"text": "..."} with JSON escapes, at most $max characters of text.
payload=$(awk -v max="$max" '
  BEGIN { out = ""; n = 0; cut = 0 }
  {
    line = $0 "\n"
    if (n + length(line) > max) { line = substr(line, 1, max - n); cut = 1 }
    n += length(line)
    gsub(/\\/, "\\\\", line); gsub(/"/, "\\\"", line); gsub(/\t/, "\\t", line)
    gsub(/\r/, "", line); gsub(/\n/, "\\n", line)
    out = out line
    if (cut) exit
  }
  END {
    if (cut) out = out "\\n... (cut; see the report file)"
    printf "{\"text\": \"%s\"}", out
  }' "${TMPDIR:-/tmp}/flightrec-chat.$$")

if [ "${FLIGHTREC_HOOK_DRY_RUN:-0}" = 1 ]; then
  printf 'dry run: would POST to %s:\n%s\n' "${FLIGHTREC_CHAT_WEBHOOK:-(no FLIGHTREC_CHAT_WEBHOOK)}" "$payload"
  exit 0
fi
: "${FLIGHTREC_CHAT_WEBHOOK:?set FLIGHTREC_CHAT_WEBHOOK to the channel webhook URL}"
# --fail: an HTTP error is a non-zero exit (logged by flightrec watch);
# --max-time: never outlive the hook timeout on a dead endpoint.
printf '%s' "$payload" | curl --silent --show-error --fail --max-time 20 \
  -H 'Content-Type: application/json' --data-binary @- "$FLIGHTREC_CHAT_WEBHOOK"
echo "posted the verdict to the chat webhook"
