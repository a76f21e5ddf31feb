"""A session-store plugin whose factory builds an incomplete store is refused when the runtime
is built: ``config check``, ``run`` and ``sessions list`` print one ``error [code]:`` line at
``session_stores.<id>``, and nothing runs with a store that stores nothing (issue 37, point 1);
a provider plugin streaming strings fails as one ``provider.protocol`` line (point 3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main

CONFIG = """\
[providers.local]
kind = "scripted"

[session_stores.disk]
kind = "half"

[agents.assistant]
provider = "local"
model = "scripted-demo"
session_store = "disk"
"""

STORE = """
    class HalfStore:
        # written in a hurry: no list_sessions, no aclose, and load's parameter renamed
        async def open_writer(self, session_id):
            raise AssertionError("never used")

        async def load(self, sid):
            raise AssertionError("never used")

        async def exists(self, session_id):
            return False

    def factory(spec):
        return HalfStore()

    def nothing(spec):
        return None
"""


@pytest.fixture
def config(install_dist: Any, tmp_path: Path) -> Path:
    install_dist(
        "half-store",
        {
            "agentrig.session_stores": {
                "half": "half_store_mod:factory",
                "none": "half_store_mod:nothing",
            }
        },
        {"half_store_mod": STORE},
    )
    path = tmp_path / "agentrig.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


EXPECTED = (
    "error [config.factory_product]: {config}: session_stores.disk: the session_stores factory "
    "'half' (half-store 1.2.3: entry point agentrig.session_stores:half = "
    "half_store_mod:factory) returned a HalfStore, not a SessionStore: load must accept "
    "load(session_id), found load(sid); "
    "missing list_sessions; missing aclose"
)


@pytest.mark.parametrize(
    ("argv", "stream", "status"),
    [
        (["run"], "err", 2),
        (["sessions", "list"], "err", 2),
        (["config", "check"], "out", 1),
    ],
)
def test_an_incomplete_store_is_one_error_line(
    argv: list[str],
    stream: str,
    status: int,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(config.parent)
    command = [*argv, str(config)] if argv[0] == "config" else [*argv, "-c", str(config)]
    command += ["hi"] if argv == ["run"] else []
    assert main(command) == status
    captured = capsys.readouterr()
    (line,) = getattr(captured, stream).splitlines()
    assert line == f"agentrig {argv[0]}: " + EXPECTED.format(config=config)
    assert "Traceback" not in captured.err


def test_a_factory_returning_none_is_named(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.write_text(CONFIG.replace('kind = "half"', 'kind = "none"'), encoding="utf-8")
    assert main(["run", "-c", str(config), "hi"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith(
        "session_stores.disk: the session_stores factory 'none' (half-store 1.2.3: entry point "
        "agentrig.session_stores:none = half_store_mod:nothing) returned None, not a SessionStore"
    )


BROKEN_PROVIDER = """
    from agentrig.builtins._scripted import ScriptedProvider

    class Chatty(ScriptedProvider):
        # streams plain strings instead of TextDelta chunks
        async def stream(self, request, *, signal):
            yield "Hello there"

    def factory(config):
        return Chatty(["unused"])
"""


def test_a_provider_streaming_strings_is_one_protocol_error_line(
    install_dist: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install_dist(
        "chatty-provider",
        {"agentrig.providers": {"chatty": "chatty_mod:factory"}},
        {"chatty_mod": BROKEN_PROVIDER},
    )
    config = tmp_path / "agentrig.toml"
    config.write_text(
        '[providers.local]\nkind = "chatty"\n\n'
        '[agents.assistant]\nprovider = "local"\nmodel = "m"\n',
        encoding="utf-8",
    )
    assert main(["run", "-c", str(config), "hi"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line == (
        "agentrig run: error [provider.protocol]: provider 'local' streamed a str, "
        "not a StreamChunk: 'Hello there'"
    )
