#!/bin/sh
# A PreToolUse hook in shell: refuse recursive deletes.
# Input: the event JSON on stdin.  Exit 0 = allow, exit 2 = deny (stderr is the reason);
# any other exit code is an error, which on PreToolUse refuses the call too (fail closed).
input=$(cat)
case "$input" in
  *'"rm -rf'* | *' rm -rf'* | *'"rm -fr'* | *' rm -fr'*)
    echo "recursive deletes are not allowed by policy (hooks/deny_rm.sh)" >&2
    exit 2
    ;;
esac
exit 0
