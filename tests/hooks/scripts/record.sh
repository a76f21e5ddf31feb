#!/bin/bash
# A Claude Code hook in bash: records its input, then answers what HOOK_ANSWER / HOOK_EXIT say.
input=$(cat)
printf '{"lang": "bash", "project_dir": "%s", "input": %s}\n' "$CLAUDE_PROJECT_DIR" "$input" >> "$HOOK_LOG"
if [ -n "$HOOK_STDERR" ]; then printf '%s' "$HOOK_STDERR" >&2; fi
# the documented Stop-hook guard against endless loops
if [ -n "$HOOK_ONCE" ] && printf '%s' "$input" | grep -q '"stop_hook_active": *true'; then
  HOOK_ANSWER=""
fi
if [ -n "$HOOK_ANSWER" ]; then printf '%s\n' "$HOOK_ANSWER"; fi
exit "${HOOK_EXIT:-0}"
