#!/usr/bin/env python3
"""A PreToolUse hook in Python: record every tool call, then answer in Claude Code's JSON.

It appends one JSON line per call to $GUARDED_AUDIT_LOG (default: audit.jsonl beside the
config) and answers ``permissionDecision: "defer"`` -- "no objection, let the normal flow
decide" -- so it never overrides another hook's deny or ask.
"""

import json
import os
import sys
import time

event = json.load(sys.stdin)
record = {
    "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "event": event.get("hook_event_name"),
    "session": event.get("session_id"),
    "tool": event.get("tool_name"),
    "input": event.get("tool_input"),
}
path = os.environ.get("GUARDED_AUDIT_LOG", "audit.jsonl")
with open(path, "a", encoding="utf-8") as log:
    log.write(json.dumps(record) + "\n")

answer = {
    "suppressOutput": True,
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "defer",
        "permissionDecisionReason": "audited",
    },
}
print(json.dumps(answer))
