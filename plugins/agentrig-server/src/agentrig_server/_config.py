"""Reading ``agentrig.toml`` for serving: the ``[server]`` table and the runtime's config.

The runtime's config model refuses tables it does not know, so the ``[server]`` table is taken
out here, validated by :func:`~agentrig_server.parse_settings`, and the rest is composed as
usual -- with the file's own name and folder, so relative paths and error messages stay right.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from agentrig.errors import ConfigError, Issue
from agentrig.kernel import LoadedConfig, load_config
from agentrig_server._settings import ServerSettings, parse_settings

__all__ = ["load_server_config"]


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError([Issue("config.not_found", f"no config file at {str(path)!r}")])
    text = path.read_bytes()
    try:
        if path.suffix.lower() in {".yaml", ".yml"}:
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = tomllib.loads(text.decode("utf-8"))
    except ImportError:
        raise ConfigError(
            [Issue("config.yaml_unavailable", "YAML needs PyYAML: pip install 'agentrig[yaml]'")],
            source=str(path),
        ) from None
    except Exception as exc:  # a syntax error of either format
        raise ConfigError([Issue("config.syntax", str(exc))], source=str(path)) from None
    if not isinstance(data, dict):
        raise ConfigError(
            [Issue("config.syntax", "the top level must be a table")], source=str(path)
        )
    return data


def load_server_config(path: str | os.PathLike[str]) -> tuple[LoadedConfig, ServerSettings]:
    """The runtime config and the server settings of one file."""
    file = Path(path)
    data = _read(file)
    server = data.pop("server", None)
    if server is not None and not isinstance(server, dict):
        raise ConfigError(
            [Issue("server.type", "[server] must be a table", ("server",))], source=str(file)
        )
    settings = parse_settings(server, source=str(file))
    try:
        loaded = load_config(data)
    except ConfigError as exc:
        raise ConfigError(exc.issues, source=str(file)) from None
    return LoadedConfig(loaded.config, str(file), file.resolve().parent), settings
