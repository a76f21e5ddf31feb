"""WebFetch: one page through the runtime's egress policy, bounded, as readable text.

The request goes through the runtime's HTTP factory, so the egress policy judges the URL and
every redirect hop: loopback, private, link-local and metadata addresses are refused unless
``[workspace.fetch] allow_private`` names them (the user's consent, given in the config).
The body is read up to ``max_bytes`` while it arrives and the whole fetch is bounded by
``timeout``; HTML becomes Markdown through ``markdownify`` (BeautifulSoup underneath).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from agentrig.builtins.workspace._base import WorkspaceTool, workspace_of
from agentrig.builtins.workspace._errors import FetchError
from agentrig.builtins.workspace._space import Workspace
from agentrig.errors import Issue
from agentrig.tools import PermissionArg, ToolContext

if TYPE_CHECKING:
    import httpx

__all__ = ["FetchInput", "WebFetchTool", "html_to_text"]

_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")


class FetchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="The http(s) URL of the page to fetch.")
    prompt: str | None = Field(
        default=None,
        description="What you are looking for on the page; it heads the returned text.",
    )


def html_to_text(html: str) -> str:
    """The readable text of an HTML page as Markdown (scripts and styles dropped)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "svg", "iframe", "head"]):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


async def _read_bounded(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        room = limit - len(body)
        if len(chunk) >= room:
            body += chunk[:room]
            return bytes(body), True
        body += chunk
    return bytes(body), False


class WebFetchTool(WorkspaceTool[FetchInput]):
    name = "WebFetch"
    summary = (
        "Fetch a web page (http or https) and return its text as Markdown, cut when long. "
        "Private and local addresses are refused unless the configuration allows them."
    )
    model = FetchInput
    risk = "execute"  # it sends data (the URL) out: asked about like a command
    permission_arg = PermissionArg("url", "url")

    def check_offered(self, space: Workspace) -> list[Issue]:
        try:
            import bs4  # noqa: F401
            import markdownify  # noqa: F401
        except ImportError:
            return [
                Issue(
                    "config.workspace_fetch",
                    "the WebFetch tool is offered but markdownify is not installed: "
                    "pip install 'agentrig[web]'",
                    ("workspace", "fetch"),
                )
            ]
        if space.http is None:
            return [
                Issue(
                    "config.workspace_fetch",
                    "WebFetch needs the runtime's HTTP clients "
                    "(the compose-egress step is disabled)",
                    ("workspace", "fetch"),
                )
            ]
        return []

    async def execute(self, input: FetchInput, ctx: ToolContext) -> Any:
        space = workspace_of(ctx)
        bounds = space.config.fetch
        if space.http is None:
            raise FetchError("WebFetch has no HTTP client in this runtime")
        client = space.http.client()
        from agentrig.host import EgressRejectedError

        try:
            with anyio.fail_after(bounds.timeout), ctx.signal.scope():
                async with client.stream("GET", input.url) as response:
                    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                    if response.status_code >= 400:
                        raise FetchError(f"{input.url} answered HTTP {response.status_code}")
                    if kind and not kind.startswith(_TEXT_TYPES):
                        raise FetchError(f"{input.url} is {kind}, not a text page")
                    body, cut = await _read_bounded(response, bounds.max_bytes)
                    encoding = response.encoding or "utf-8"
                    final = str(response.url)
        except TimeoutError:
            raise FetchError(f"{input.url} did not answer within {bounds.timeout:g}s") from None
        except EgressRejectedError as exc:
            raise FetchError(f"refused by the egress policy: {exc.message}") from None
        except Exception as exc:
            import httpx

            if isinstance(exc, httpx.HTTPError):
                raise FetchError(f"fetching {input.url} failed: {exc}") from None
            raise
        ctx.signal.raise_if_cancelled()
        text = body.decode(encoding, "replace")
        if kind in ("text/html", "application/xhtml+xml") or (not kind and "<html" in text[:500]):
            text = html_to_text(text)
        notes = []
        if cut:
            notes.append(f"[the page was cut at {bounds.max_bytes} bytes]")
        if len(text) > bounds.max_chars:
            text = text[: bounds.max_chars]
            notes.append(f"[the text was cut at {bounds.max_chars} characters]")
        head = f"Fetched {final}" + (f" (looking for: {input.prompt})" if input.prompt else "")
        return "\n\n".join([head, text, *notes])
