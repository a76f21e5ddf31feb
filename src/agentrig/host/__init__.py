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

What each guarantee does *not* cover is written down in ``docs/security.md``.
"""

from __future__ import annotations

from agentrig.host._addresses import (
    CLOUD_METADATA_ADDRESSES,
    SPECIAL_PURPOSE_NETWORKS,
    AddressVerdict,
    classify_address,
)
from agentrig.host._children import ChildGroup, spawn_in_group
from agentrig.host._client import EgressClient, egress_client, egress_request
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
from agentrig.host._paths import canonical_path, is_within, require_within
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
from agentrig.host._resolver import Resolver, SystemResolver
from agentrig.host._transport import EgressTransport, PinnedNetworkBackend

__all__ = [
    "CLOUD_METADATA_ADDRESSES",
    "DEFAULT_BLOCKED_HOSTS",
    "SPECIAL_PURPOSE_NETWORKS",
    "AddressVerdict",
    "AlreadyExistsError",
    "ChildGroup",
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
    "exit_registry",
    "guarantee",
    "inspect",
    "is_within",
    "owner_state",
    "process_start_time",
    "read_marker",
    "remove_process_dir",
    "require_within",
    "spawn_in_group",
    "sweep",
]
