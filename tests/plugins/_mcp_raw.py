"""A hand-written MCP server over stdio that misbehaves on purpose (raw JSON-RPC lines).

    python _mcp_raw.py MODE [ARG]

It answers ``initialize``, ``tools/list`` (one tool, ``probe``) and ``tools/call`` like a
server should, except where MODE says otherwise:

* ``crash-at:<method>`` / ``hang-at:<method>`` -- exit (status 4, a line on stderr) or never
  answer when ``<method>`` arrives;
* ``huge:<bytes>`` -- answer the call with one line of that many bytes;
* ``storm:<n>`` -- send ``n`` log notifications before answering the call;
* ``endless-progress`` -- answer the call never, but send progress every 0.05 s;
* ``bad-utf8`` -- answer the call with an invalid UTF-8 byte inside its text;
* ``garbage`` -- write lines that are not JSON-RPC before each answer;
* ``unknown-block`` -- answer the call with a block of an unknown type between good ones;
* ``endless-pages`` -- ``tools/list`` always has a next page;
* ``bad-tool`` -- ``tools/list`` has one entry without a name among good ones;
* ``scalar-schema`` -- ``tools/list`` has a tool ``scalar`` whose input schema is a string;
* ``no-tools`` -- advertise no tools at initialization (and crash if asked for them).
"""

from __future__ import annotations

import json
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
KIND, _, ARG = MODE.partition(":")
out = sys.stdout.buffer


def send(message: dict[str, object]) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def answer(request_id: object, result: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


PROBE = {"name": "probe", "description": "A probe.", "inputSchema": {"type": "object"}}


def call(request_id: object, params: dict[str, object]) -> None:
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    if KIND == "huge":
        text = "y" * int(ARG)
        answer(request_id, {"content": [{"type": "text", "text": text}]})
    elif KIND == "storm":
        for i in range(int(ARG)):
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "debug", "data": f"noise {i}"},
                }
            )
        answer(request_id, {"content": [{"type": "text", "text": "after the storm"}]})
    elif KIND == "endless-progress":
        i = 0
        while True:
            i += 1
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": i},
                }
            )
            time.sleep(0.05)
    elif KIND == "bad-utf8":
        text = json.dumps({"content": [{"type": "text", "text": "caf@ ok"}]})
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": "RESULT"})
        out.write(line.replace('"RESULT"', text).encode().replace(b"@", b"\xe9") + b"\n")
        out.flush()
    elif KIND == "unknown-block":
        blocks = [
            {"type": "text", "text": "first"},
            {"type": "hologram", "data": "???"},
            {"type": "text", "text": "last"},
        ]
        answer(request_id, {"content": blocks, "structuredContent": {"n": 1}})
    else:
        answer(request_id, {"content": [{"type": "text", "text": "probed"}]})


def main() -> None:
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method = message.get("method")
        request_id = message.get("id")
        if request_id is None:
            continue  # a notification
        if KIND == "garbage":
            out.write(b'this is not json\n{"jsonrpc": "2.0"}\n')
            out.flush()
        if method == "tools/list" and KIND == "no-tools":
            sys.exit(5)  # asked for what it never offered
        if method == ARG and KIND == "crash-at":
            sys.stderr.write(f"giving up at {method}\n")
            sys.stderr.flush()
            sys.exit(4)
        if method == ARG and KIND == "hang-at":
            time.sleep(3600)
        if method == "initialize":
            answer(
                request_id,
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {} if KIND == "no-tools" else {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "1"},
                },
            )
        elif method == "tools/list":
            if KIND == "endless-pages":
                answer(request_id, {"tools": [PROBE], "nextCursor": f"c{request_id}"})
            elif KIND == "scalar-schema":
                scalar = {
                    "name": "scalar",
                    "description": "Scalar root.",
                    "inputSchema": {"type": "string"},
                }
                answer(request_id, {"tools": [PROBE, scalar]})
            elif KIND == "bad-tool":
                answer(request_id, {"tools": [PROBE, {"description": "no name"}]})
            else:
                answer(request_id, {"tools": [PROBE]})
        elif method == "tools/call":
            call(request_id, message.get("params") or {})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
