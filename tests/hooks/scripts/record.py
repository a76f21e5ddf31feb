"""A Claude Code hook in Python: records its input and transcript, then answers per env."""

import json
import os
import sys

event = json.load(sys.stdin)
lines = []
path = event.get("transcript_path")
if path:
    with open(path, encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
record = {
    "lang": "python",
    "project_dir": os.environ.get("CLAUDE_PROJECT_DIR"),
    "plugin_root": os.environ.get("CLAUDE_PLUGIN_ROOT"),
    "input": event,
    "transcript": lines,
}
with open(os.environ["HOOK_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(record) + "\n")
answer = os.environ.get("HOOK_ANSWER")
if event.get("stop_hook_active") and os.environ.get("HOOK_ONCE"):
    answer = None  # the documented Stop-hook guard against endless loops
if answer:
    print(answer)
if os.environ.get("HOOK_STDERR"):
    sys.stderr.write(os.environ["HOOK_STDERR"])
sys.exit(int(os.environ.get("HOOK_EXIT", "0")))
