"""agentrig.host: the guarantees that touch the operating system.

This package is imported by the built-ins that need it, never by ``agentrig`` itself: it
reads the filesystem, resolves names and opens sockets, and keeping it out of the root
import keeps those dependencies visible where they are used.

* **Egress policy** -- :func:`check_url` (pure), :func:`check_destination` (one resolution),
  :class:`EgressTransport` / :func:`egress_client` / :func:`egress_request` (connections only
  to validated addresses, redirects re-judged hop by hop).
* **Path containment** -- :func:`is_within` / :func:`require_within` on canonical paths.
* **Owner-only store** -- :class:`OwnerOnlyStore` (0700/0600 from creation, verified).
* **Process-scoped directories and markers** -- :func:`create_process_dir`, :func:`sweep`,
  :func:`inspect`, :class:`ProcessMarker`, judged by :func:`owner_state`.
* **Children in their own process group** -- :func:`spawn_in_group`.
* **Process trees that end with their command** -- :func:`open_reaped` / :func:`end_tree`
  (a subreaper ends every descendant, ``setsid`` ones included; Linux), optionally as a
  restricted user under rlimits (:class:`Confinement`).

What each guarantee does *not* cover is written down in ``docs/security.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig._lazy import lazy_exports

# name -> defining module, imported on first use (PEP 562): the permission matcher needs
# path containment, not the egress client's httpx/httpcore (and through it trio)
_LAZY: dict[str, str] = {
    "AddressVerdict": "agentrig.host._addresses",
    "AlreadyExistsError": "agentrig.host._errors",
    "CLOUD_METADATA_ADDRESSES": "agentrig.host._addresses",
    "ChildGroup": "agentrig.host._children",
    "Confinement": "agentrig.host._confinement",
    "DEFAULT_BLOCKED_HOSTS": "agentrig.host._egress",
    "EgressAllowed": "agentrig.host._egress",
    "EgressClient": "agentrig.host._client",
    "EgressOutcome": "agentrig.host._egress",
    "EgressPolicy": "agentrig.host._egress",
    "EgressRejected": "agentrig.host._egress",
    "EgressRejectedError": "agentrig.host._errors",
    "EgressTransport": "agentrig.host._transport",
    "ExitRegistry": "agentrig.host._exit",
    "HostError": "agentrig.host._errors",
    "InPlaceUnconfirmed": "agentrig.host._errors",
    "MarkerError": "agentrig.host._errors",
    "MarkerHeldError": "agentrig.host._errors",
    "MarkerInfo": "agentrig.host._markers",
    "MarkerLostError": "agentrig.host._errors",
    "ModeNotEnforcedError": "agentrig.host._errors",
    "OwnerOnlyStore": "agentrig.host._owner_store",
    "OwnerRecord": "agentrig.host._process",
    "OwnerState": "agentrig.host._process",
    "OwnerStoreError": "agentrig.host._errors",
    "PartialReplaceError": "agentrig.host._errors",
    "PathContainmentError": "agentrig.host._errors",
    "PathEscapeError": "agentrig.host._errors",
    "PinnedNetworkBackend": "agentrig.host._transport",
    "ProcessDirInfo": "agentrig.host._procdirs",
    "ProcessMarker": "agentrig.host._markers",
    "REAPING": "agentrig.host._reaping",
    "ReaperStartError": "agentrig.host._reaping",
    "RejectionReason": "agentrig.host._egress",
    "Resolver": "agentrig.host._resolver",
    "SPECIAL_PURPOSE_NETWORKS": "agentrig.host._addresses",
    "SweepReport": "agentrig.host._procdirs",
    "SystemResolver": "agentrig.host._resolver",
    "UnsafeExistingError": "agentrig.host._errors",
    "canonical_path": "agentrig.host._paths",
    "check_destination": "agentrig.host._egress",
    "check_url": "agentrig.host._egress",
    "classify_address": "agentrig.host._addresses",
    "create_process_dir": "agentrig.host._procdirs",
    "current_owner": "agentrig.host._process",
    "egress_client": "agentrig.host._client",
    "egress_request": "agentrig.host._client",
    "end_tree": "agentrig.host._reaping",
    "expand_glob": "agentrig.host._paths",
    "exit_registry": "agentrig.host._exit",
    "guarantee": "agentrig.host._owner_store",
    "inspect": "agentrig.host._procdirs",
    "is_within": "agentrig.host._paths",
    "resolve_path": "agentrig.host._paths",
    "kill_tree_group": "agentrig.host._reaping",
    "open_reaped": "agentrig.host._reaping",
    "owner_state": "agentrig.host._process",
    "process_start_time": "agentrig.host._process",
    "read_marker": "agentrig.host._markers",
    "remove_process_dir": "agentrig.host._procdirs",
    "require_within": "agentrig.host._paths",
    "spawn_in_group": "agentrig.host._children",
    "sweep": "agentrig.host._procdirs",
}

__all__ = [
    "CLOUD_METADATA_ADDRESSES",
    "DEFAULT_BLOCKED_HOSTS",
    "SPECIAL_PURPOSE_NETWORKS",
    "AddressVerdict",
    "AlreadyExistsError",
    "ChildGroup",
    "Confinement",
    "EgressAllowed",
    "EgressClient",
    "EgressOutcome",
    "EgressPolicy",
    "EgressRejected",
    "EgressRejectedError",
    "EgressTransport",
    "ExitRegistry",
    "HostError",
    "InPlaceUnconfirmed",
    "MarkerError",
    "MarkerHeldError",
    "MarkerInfo",
    "MarkerLostError",
    "ModeNotEnforcedError",
    "OwnerOnlyStore",
    "OwnerRecord",
    "OwnerState",
    "OwnerStoreError",
    "PartialReplaceError",
    "PathContainmentError",
    "PathEscapeError",
    "PinnedNetworkBackend",
    "ProcessDirInfo",
    "ProcessMarker",
    "REAPING",
    "ReaperStartError",
    "RejectionReason",
    "Resolver",
    "SweepReport",
    "SystemResolver",
    "UnsafeExistingError",
    "canonical_path",
    "check_destination",
    "check_url",
    "classify_address",
    "create_process_dir",
    "current_owner",
    "egress_client",
    "egress_request",
    "end_tree",
    "exit_registry",
    "expand_glob",
    "guarantee",
    "inspect",
    "is_within",
    "kill_tree_group",
    "open_reaped",
    "owner_state",
    "process_start_time",
    "read_marker",
    "remove_process_dir",
    "require_within",
    "resolve_path",
    "spawn_in_group",
    "sweep",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


if TYPE_CHECKING:
    from agentrig.host._addresses import (
        CLOUD_METADATA_ADDRESSES,
        SPECIAL_PURPOSE_NETWORKS,
        AddressVerdict,
        classify_address,
    )
    from agentrig.host._children import ChildGroup, spawn_in_group
    from agentrig.host._client import EgressClient, egress_client, egress_request
    from agentrig.host._confinement import Confinement
    from agentrig.host._egress import (
        DEFAULT_BLOCKED_HOSTS,
        EgressAllowed,
        EgressOutcome,
        EgressPolicy,
        EgressRejected,
        RejectionReason,
        check_destination,
        check_url,
    )
    from agentrig.host._errors import (
        AlreadyExistsError,
        EgressRejectedError,
        HostError,
        InPlaceUnconfirmed,
        MarkerError,
        MarkerHeldError,
        MarkerLostError,
        ModeNotEnforcedError,
        OwnerStoreError,
        PartialReplaceError,
        PathContainmentError,
        PathEscapeError,
        UnsafeExistingError,
    )
    from agentrig.host._exit import ExitRegistry, exit_registry
    from agentrig.host._markers import MarkerInfo, ProcessMarker, read_marker
    from agentrig.host._owner_store import OwnerOnlyStore, guarantee
    from agentrig.host._paths import (
        canonical_path,
        expand_glob,
        is_within,
        require_within,
        resolve_path,
    )
    from agentrig.host._procdirs import (
        ProcessDirInfo,
        SweepReport,
        create_process_dir,
        inspect,
        remove_process_dir,
        sweep,
    )
    from agentrig.host._process import (
        OwnerRecord,
        OwnerState,
        current_owner,
        owner_state,
        process_start_time,
    )
    from agentrig.host._reaping import (
        REAPING,
        ReaperStartError,
        end_tree,
        kill_tree_group,
        open_reaped,
    )
    from agentrig.host._resolver import Resolver, SystemResolver
    from agentrig.host._transport import EgressTransport, PinnedNetworkBackend
