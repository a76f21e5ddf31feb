"""A Claude Code plugin hook: logs each Bash call, refuses a force push (exit 2)."""

import json
import os
import sys

event = json.load(sys.stdin)
with open(os.environ["GUARD_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"plugin_root": os.environ.get("CLAUDE_PLUGIN_ROOT"), **event}) + "\n")
if "--force" in event["tool_input"].get("command", ""):
    print("force pushes are refused by the guard plugin", file=sys.stderr)
    sys.exit(2)
