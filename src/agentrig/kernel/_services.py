"""Typed runtime services: what a plugin adds to a runtime, found again by a typed key.

A plugin declares ``CACHE: ServiceKey[MyCache] = ServiceKey("my-plugin.cache")``, provides
the value from a compose step (``rt.services.provide(CACHE, cache)``) and reads it anywhere
(``rt.services.require(CACHE)``): mypy checks both ends.  A key's name is its identity.
Services are sealed with the catalogs; a key naming a protocol refuses, when provided, a
value that lacks one of its members or takes other parameters.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

import attrs

from agentrig.errors import (
    DuplicateIdError,
    PluginError,
    SealedCatalogError,
    UnknownIdError,
    closest_match,
    did_you_mean,
)

__all__ = ["ServiceKey", "Services"]

T = TypeVar("T")


@final
@attrs.frozen(slots=True)
class ServiceKey(Generic[T]):
    """The typed name of one runtime service; ``protocol`` is checked on every value provided."""

    name: str
    protocol: type | None = attrs.field(default=None, kw_only=True, eq=False, repr=False)

    def __str__(self) -> str:
        return self.name


@final
class Services:
    """The services of one runtime, keyed by :class:`ServiceKey` (sealed after composition)."""

    __slots__ = ("_sealed", "_sources", "_values")

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._sources: dict[str, str | None] = {}
        self._sealed = False

    def provide(
        self, key: ServiceKey[T], value: T, *, replace: bool = False, source: str | None = None
    ) -> None:
        """Make ``value`` the service ``key``; a second provider needs ``replace=True``."""
        if self._sealed:
            raise SealedCatalogError(
                f"service {key.name!r} provided after the runtime was composed; "
                "provide services from a compose step"
            )
        if key.protocol is not None:
            self._check(key, key.protocol, value, source)
        if key.name in self._values and not replace:
            raise DuplicateIdError(
                f"service {key.name!r} is already provided"
                f" (by {self._sources[key.name] or 'an unnamed provider'}); "
                "pass replace=True to replace it"
            )
        self._values[key.name] = value
        self._sources[key.name] = source

    @staticmethod
    def _check(key: ServiceKey[Any], protocol: type, value: object, source: str | None) -> None:
        # imported here: looking a service up (the kernel face binding ``Services``) must not
        # load the contract checks
        from agentrig.kernel._contracts import protocol_problems

        problems = protocol_problems(value, protocol)
        if problems:
            raise PluginError(
                f"service {key.name!r} provided by {source or 'an unnamed provider'} is not a "
                f"{protocol.__name__}: {'; '.join(problems)}"
            )

    def get(self, key: ServiceKey[T]) -> T | None:
        """The service ``key``, or None when nobody provided it."""
        value: T | None = self._values.get(key.name)
        return value

    def require(self, key: ServiceKey[T]) -> T:
        """The service ``key``; raises :class:`~agentrig.errors.UnknownIdError` when missing."""
        try:
            value: T = self._values[key.name]
        except KeyError:
            known = sorted(self._values)
            hint = did_you_mean(key.name, known)
            raise UnknownIdError(
                f"no service {key.name!r} was provided{hint} "
                f"(provided: {', '.join(known) or 'none'}); is the plugin that provides it "
                "installed and enabled?",
                id=key.name,
                known=known,
                suggestion=closest_match(key.name, known),
            ) from None
        return value

    def has(self, key: ServiceKey[Any]) -> bool:
        return key.name in self._values

    def names(self) -> tuple[str, ...]:
        """The names of the provided services, in the order they were provided."""
        return tuple(self._values)

    def seal(self) -> None:
        self._sealed = True

    @property
    def sealed(self) -> bool:
        return self._sealed

    def __repr__(self) -> str:
        return f"<Services {', '.join(self._values) or 'none'}>"
