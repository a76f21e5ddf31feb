"""Responses the server keeps for ``GET`` and ``DELETE /v1/responses/{id}``.

A response made with ``store`` (the default, as in OpenAI's API) is kept as it was answered,
owned by the caller that made it: another caller gets a 404, as for a response that never
existed.  At most ``limit`` are kept, the oldest dropped first; they live in the server's
memory and end with it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from agentrig_server._errors import ApiError

__all__ = ["StoredResponses"]


class StoredResponses:
    """Finished responses by id, each with its owner."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._kept: OrderedDict[str, tuple[str, dict[str, Any]]] = OrderedDict()

    def keep(self, owner: str, response: dict[str, Any]) -> None:
        self._kept[str(response["id"])] = (owner, response)
        while len(self._kept) > self._limit:
            self._kept.popitem(last=False)

    def get(self, response_id: str, owner: str) -> dict[str, Any]:
        found = self._kept.get(response_id)
        if found is None or found[0] != owner:
            raise ApiError(404, f"no response {response_id!r}", code="not_found")
        return found[1]

    def delete(self, response_id: str, owner: str) -> None:
        self.get(response_id, owner)
        del self._kept[response_id]
