"""Composition steps for ``[credential_stores.<id>]`` and ``[sealers.<id>]``, and their checks.

Both run before the providers and the session stores (see
:mod:`agentrig.builtins._composition`): a provider credential written as
``"$STORE:<store-id>:<service>/<account>"`` is resolved through the ``credential_stores``
catalog while the providers are built, and a session store whose options say
``sealer = "<sealer-id>"`` receives the ``sealers`` catalog in its factory spec.

::

    [credential_stores.vault]
    kind = "file"
    options = { path = ".agentrig/credentials.json" }

    [sealers.main]
    kind = "sodium"                      # the agentrig-sodium plugin
    options = { directory = ".agentrig/keys" }

    [providers.openai]
    kind = "openai"
    credentials = { api_key = "$STORE:vault:openai/default" }

    [session_stores.local]
    kind = "jsonl"
    options = { sealer = "main" }

:func:`security_issues` is what ``agentrig config check`` (through
:func:`~agentrig.builtins._compose.check_composition`) reports for these tables without
building anything or reading any secret: unknown, disabled or broken kinds, invalid options,
malformed ``$STORE:`` references and references to store or sealer ids nobody configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agentrig.builtins._compose import _entry_issue, _options_issues
from agentrig.builtins._factory import call_factory
from agentrig.catalog import CatalogKey
from agentrig.credentials import (
    CREDENTIAL_STORES,
    CredentialReferenceError,
    CredentialStore,
    parse_store_reference,
)
from agentrig.errors import Issue
from agentrig.ids import EntryId
from agentrig.sealing import SEALERS, Sealer

if TYPE_CHECKING:
    from agentrig.kernel import LoadedConfig, PluginIndex, Runtime, StoreConfig

__all__ = ["compose_credentials", "compose_sealers", "security_issues"]

_PROTOCOLS: dict[str, type] = {"credential_stores": CredentialStore, "sealers": Sealer}


def _known(ids: Any) -> str:
    return ", ".join(sorted(ids)) or "none configured"


def security_issues(loaded: LoadedConfig, index: PluginIndex) -> list[Issue]:
    """Config problems of credential stores, sealers and the references to them."""
    config = loaded.config
    issues: list[Issue] = []
    for kind, table in (
        ("credential_stores", config.credential_stores),
        ("sealers", config.sealers),
    ):
        for sid, entry in table.items():
            issue = _entry_issue(index, kind, entry.kind, (kind, sid, "kind"))
            if issue:
                issues.append(issue)
            else:
                factory = index.load(kind, entry.kind)
                issues += _options_issues(factory, entry.options, (kind, sid, "options"))
    for sid in config.credential_stores:
        try:
            parse_store_reference(f"$STORE:{sid}:service/account")
        except CredentialReferenceError:
            issues.append(
                Issue(
                    "config.invalid_id",
                    f"credential store id {sid!r} cannot be named by a $STORE: reference "
                    "(letters, digits, '_', '.', '-'; starts with a letter or digit)",
                    ("credential_stores", sid),
                )
            )
    for pid, provider in config.providers.items():
        for key, value in provider.credentials.items():
            path = ("providers", pid, "credentials", key)
            try:
                reference = parse_store_reference(value)
            except CredentialReferenceError as exc:
                issues.append(Issue("config.credential_reference", str(exc), path))
                continue
            if reference is not None and reference.store not in config.credential_stores:
                issues.append(
                    Issue(
                        "config.unknown_id",
                        f"unknown credential store {reference.store!r} in {value!r} "
                        f"(configured credential stores: {_known(config.credential_stores)})",
                        path,
                    )
                )
    for sid, store in config.session_stores.items():
        sealer = store.options.get("sealer")
        if isinstance(sealer, str) and sealer not in config.sealers:
            issues.append(
                Issue(
                    "config.unknown_id",
                    f"unknown sealer {sealer!r} (configured sealers: {_known(config.sealers)})",
                    ("session_stores", sid, "options", "sealer"),
                )
            )
    return issues


def _build(rt: Runtime, key: CatalogKey[EntryId, Any], table: dict[EntryId, StoreConfig]) -> None:
    kind = key.name
    registry = rt.registry(key)
    protocol = _PROTOCOLS[kind]
    for sid, entry in table.items():
        if registry.has(sid):  # a test override
            continue
        factory: Any = rt.index.load(kind, entry.kind)
        options: dict[str, Any] = dict(entry.options)
        model = getattr(factory, "options_model", None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            options = model.model_validate(options).model_dump()
        spec = {"id": sid, "options": options, "base_dir": rt.loaded.base_dir}
        built = call_factory(rt, kind, entry.kind, (kind, sid), factory, spec, protocol)
        registry.register(built, id=sid, source=f"{kind}:{entry.kind}")


async def compose_credentials(rt: Runtime) -> None:
    """Build each ``[credential_stores.<id>]`` and register it under ``<id>``.

    Nothing is read from the stores here; a ``$STORE:`` reference is resolved when the
    provider that uses it is built.
    """
    _build(rt, CREDENTIAL_STORES, rt.config.credential_stores)


async def compose_sealers(rt: Runtime) -> None:
    """Build each ``[sealers.<id>]`` and register it under ``<id>``."""
    _build(rt, SEALERS, rt.config.sealers)
