#!/bin/sh
# flightrec verdict hook: post the verdict to a chat channel through an
# incoming webhook (Slack, Mattermost, Rocket.Chat and Teams' Slack-compatible
# endpoints all take {"text": "..."}).
#
#   NCCL_FLIGHTREC_ON_VERDICT=/opt/flightrec/share/flightrec/hooks/post-to-chat.sh
#   flightrec watch DIR --on-verdict-file ~/.flightrec-hook   (the file holds the line above)
#
# Settings (environment):
#   FLIGHTREC_CHAT_WEBHOOK   the webhook URL (required unless dry run). It is
#                            a secret: set it in the job's environment, never
#                            in --on-verdict (which `ps` shows to everyone)
#   FLIGHTREC_CHAT_MAX_CHARS longest message text sent (default 3500
#                            characters, bytes without jq; the Markdown
#                            report is cut there, the full report path is
#                            given)
#   FLIGHTREC_HOOK_DRY_RUN=1 print the request instead of sending it
# Needs: sh, mktemp, cat, tr, sed, curl, and jq or awk (jq when installed builds the
# JSON; else an awk escaper: backslash, quote and every control character).
# Exit status: curl's (0 when the post was accepted).
set -eu

: "${FLIGHTREC_VERDICT:?run me from flightrec watch (FLIGHTREC_VERDICT is not set)}"
max=${FLIGHTREC_CHAT_MAX_CHARS:-3500}
case $max in
  '' | *[!0-9]*) max=3500 ;;
esac
report_md=${FLIGHTREC_REPORT_MD:-}

# The message text, in a private temporary (mktemp: a new name, mode 0600).
text=$(mktemp "${TMPDIR:-/tmp}/flightrec-chat.XXXXXXXX")
trap 'rm -f "$text"' EXIT
trap 'exit 1' HUP INT TERM

# One line saying where the files are, then the Markdown report (which
# starts with the headline). The report is read only when it is a regular
# file of ours, not a symlink: in a shared dump directory another user could
# have put a link to one of our private files at its name.
{
  printf 'flightrec: job %s, verdict **%s**, culprits: %s\n' \
    "${FLIGHTREC_JOB_ID:-?}" "$FLIGHTREC_VERDICT" "${FLIGHTREC_CULPRITS:-none named}"
  printf 'Reports: %s (and .html, .json beside it)\n\n' "${report_md:-?}"
  if [ -n "$report_md" ] && [ -f "$report_md" ] && [ ! -L "$report_md" ] && [ -O "$report_md" ]; then
    cat -- "$report_md"
  else
    printf '%s\n' "${FLIGHTREC_HEADLINE:-}"
  fi
} >"$text"

# {"text": "..."}, at most $max characters of text.
if command -v jq >/dev/null 2>&1; then
  payload=$(jq -c -R -s --argjson max "$max" \
    '{text: (if length > $max then .[0:$max] + "\n... (cut; see the report file)" else . end)}' \
    "$text")
else
  # Byte by byte in the C locale: backslash and quote escaped, control
  # characters as \uXXXX (\n, \t kept readable), NUL and DEL dropped; a
  # cut never splits a UTF-8 sequence.
  payload=$(LC_ALL=C awk -v max="$max" '
    BEGIN {
      for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
      out = ""; n = 0; cut = 0
    }
    function esc(c,    o) {
      o = ord[c]
      if (c == "\\") return "\\\\"
      if (c == "\"") return "\\\""
      if (o == 10) return "\\n"
      if (o == 9) return "\\t"
      if (o < 32) return sprintf("\\u%04x", o)
      if (o == 127) return ""
      return c
    }
    # How many bytes of line s (from its start) may be kept in `room`
    # bytes without cutting a UTF-8 sequence.
    function fit(s, room,    k, o, lead, need) {
      if (room >= length(s)) return length(s)
      k = room
      # Back to the first byte of the sequence at the cut.
      lead = k + 1
      while (lead > 1 && ord[substr(s, lead, 1)] >= 128 && ord[substr(s, lead, 1)] < 192) lead--
      o = ord[substr(s, lead, 1)]
      if (o < 128) return k
      need = o >= 240 ? 4 : (o >= 224 ? 3 : 2)
      if (lead + need - 1 <= k) return k
      return lead - 1
    }
    {
      line = $0 "\n"
      if (n + length(line) > max) { line = substr(line, 1, fit(line, max - n)); cut = 1 }
      n += length(line)
      for (i = 1; i <= length(line); i++) out = out esc(substr(line, i, 1))
      if (cut) exit
    }
    END {
      if (cut) out = out "\\n... (cut; see the report file)"
      printf "{\"text\":\"%s\"}", out
    }' "$text")
fi

if [ "${FLIGHTREC_HOOK_DRY_RUN:-0}" = 1 ]; then
  # The URL is a secret: only whether it is set is shown.
  where='(no FLIGHTREC_CHAT_WEBHOOK)'
  [ -z "${FLIGHTREC_CHAT_WEBHOOK:-}" ] || where='the chat webhook'
  printf 'dry run: would POST to %s:\n%s\n' "$where" "$payload"
  exit 0
fi
: "${FLIGHTREC_CHAT_WEBHOOK:?set FLIGHTREC_CHAT_WEBHOOK to the channel webhook URL}"
# --fail: an HTTP error is a non-zero exit (logged by flightrec watch);
# --max-time: never outlive the hook timeout on a dead endpoint. The URL
# reaches curl as a config on its stdin (-K -), not in its arguments, which
# `ps` shows to everyone; the payload goes through the private temporary.
printf 'url = "%s"\n' "$(printf '%s' "$FLIGHTREC_CHAT_WEBHOOK" | tr -d '\n\r' | sed 's/[\\"]/\\&/g')" |
  {
    printf '%s' "$payload" >"$text"
    curl --silent --show-error --fail --max-time 20 -K - \
      -H 'Content-Type: application/json' --data-binary @"$text"
  }
echo "posted the verdict to the chat webhook"
