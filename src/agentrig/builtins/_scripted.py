"""The ``scripted`` provider: replays a script of responses, offline.

It is the demo's default model and the test suite's fake.  Each request consumes the next
:class:`Reply` of the script: text (streamed in pieces, optionally with delays), reasoning,
tool calls, usage (reported only when the script gives it -- never fabricated), or a
failure to raise.  Every request it received is kept in :attr:`ScriptedProvider.requests`.
A stream honours its cancel signal between chunks and during delays.

A script is a cursor held by one process.  ``rounds`` and ``rules`` choose the reply from
the request instead (see :mod:`agentrig.builtins._scripted_choice`): ``rounds[n]`` answers
the request holding ``n`` assistant messages, a rule answers when its conditions on the
round or the last message hold.  A fresh provider -- a restarted worker, another server
process -- then answers a conversation exactly as the first one did, tool-call ids included.

``checkpoint`` says how often a stream gives the event loop a turn: ``"chunk"`` (the
default) before every chunk, as a network stream whose chunks arrive one by one;
``"reply"`` once per reply, as a reply read from one buffer -- the cancel signal is still
checked before every chunk.  Benchmarks comparing the loop with frameworks whose fake
models never yield use ``"reply"``.

In ``agentrig.toml``::

    [providers.local]
    kind = "scripted"
    options.script = [
      { tool_calls = [{ name = "clock", arguments = {} }] },
      { text = "It is noon.", usage = { prompt = 12, completion = 4 } },
    ]
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.lowlevel
import attrs
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentrig.builtins._scripted_choice import (
    Rule,
    ScriptExhaustedError,
    ScriptNoRuleError,
    calls_before,
    choose_by_round,
    choose_by_rule,
)
from agentrig.cancel import CancelSignal
from agentrig.kernel import with_options
from agentrig.llm import (
    Capabilities,
    FinishChunk,
    ModelRequest,
    ModelResponse,
    ProviderConfig,
    ProviderError,
    ReasoningDelta,
    ReasoningEffort,
    StopReason,
    StreamAssembler,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
    UsageChunk,
    error_from_status,
    report_effort,
    resolve_effort_level,
)

__all__ = [
    "Reply",
    "Rule",
    "ScriptExhaustedError",
    "ScriptNoRuleError",
    "ScriptedCall",
    "ScriptedOptions",
    "ScriptedProvider",
    "factory",
]


@attrs.frozen(slots=True)
class ScriptedCall:
    """A tool call the scripted model makes."""

    name: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    id: str | None = None
    raw_arguments: str | None = None  # send these bytes instead of JSON(arguments)


@attrs.frozen(slots=True)
class Reply:
    """One scripted model response."""

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    usage: Usage | None = None
    stop_reason: StopReason | None = None
    chunk_size: int = 8
    delay: float = 0.0  # seconds before each streamed chunk
    error: ProviderError | None = None  # raised instead of answering
    fail_after_chunks: int | None = None  # raise `error` mid-stream after this many chunks

    def chunks(self, call_index_start: int = 0) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        if self.reasoning:
            out.append(ReasoningDelta(text=self.reasoning))
        size = max(1, self.chunk_size)
        for start in range(0, len(self.text), size):
            out.append(TextDelta(text=self.text[start : start + size]))
        for offset, call in enumerate(self.tool_calls):
            index = call_index_start + offset
            call_id = call.id if call.id is not None else f"call_{index}"
            out.append(ToolCallStart(index=offset, id=call_id, name=call.name))
            raw = call.raw_arguments
            if raw is None:
                arguments = call.arguments
                if arguments:
                    raw = _dumps(arguments if type(arguments) is dict else dict(arguments))
                else:
                    raw = ""
            if raw:
                out.append(ToolCallDelta(index=offset, arguments=raw))
        if self.usage is not None:
            usage = self.usage
            out.append(UsageChunk(usage=usage))
        stop = self.stop_reason or ("tool_calls" if self.tool_calls else "end")
        # the vendor's own value is the scripted one, as a real adapter passes its vendor's
        out.append(FinishChunk(stop_reason=stop, provider_stop_reason=stop))
        return out


_dumps = json.JSONEncoder().encode  # json.dumps with its defaults, without the argument walk


class _ScriptedCallOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class _UsageOptions(BaseModel):
    """A reply's usage: every count ``Usage`` has; an unknown key is refused, not dropped."""

    model_config = ConfigDict(extra="forbid")

    prompt: int = 0
    completion: int = 0
    total: int | None = None  # default: prompt + completion
    cache_read: int | None = None
    cache_write: int | None = None
    uncached_input: int | None = None
    reasoning: int | None = None


class _ReplyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = ""
    reasoning: str = ""
    tool_calls: list[_ScriptedCallOptions] = Field(default_factory=list)
    usage: _UsageOptions | None = None
    delay: float = 0.0
    chunk_size: int = 8
    error: dict[str, Any] | None = None  # {"status": 429, "message": "...", "type": "..."}
    #: why the reply ends (default: ``tool_calls`` with calls, else ``end``); ``refusal`` or
    #: ``content_filter`` script what an agent classifying replies ends on
    stop_reason: StopReason | None = None


class _WhenOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    round: int | None = Field(default=None, ge=0)
    last_user_contains: str | None = None
    last_tool_result_contains: str | None = None


class _RuleOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    when: _WhenOptions
    reply: _ReplyOptions


class ScriptedOptions(BaseModel):
    """``[providers.<id>] kind = "scripted"`` options."""

    model_config = ConfigDict(extra="forbid")

    script: list[_ReplyOptions] = Field(default_factory=list)
    script_file: str | None = None
    rounds: list[_ReplyOptions] | None = None
    rules: list[_RuleOptions] | None = None
    on_exhausted: Literal["error", "repeat"] = "error"
    structured_output: Literal["native", "json_mode", "none"] | None = "native"
    checkpoint: Literal["chunk", "reply"] = "chunk"
    #: the models it answers as (unset: any); ``agent.set_model`` refuses another
    models: list[str] | None = None
    #: the reasoning-effort levels it declares (unset: none declared); a request's level is
    #: resolved against them and reported, as a real provider's would be
    reasoning_effort: list[ReasoningEffort] | None = None

    @model_validator(mode="after")
    def _one_way_to_answer(self) -> ScriptedOptions:
        given = [
            key
            for key, value in (
                ("script", self.script or None),
                ("script_file", self.script_file),
                ("rounds", self.rounds),
                ("rules", self.rules),
            )
            if value is not None
        ]
        if len(given) > 1 and set(given) != {"script", "script_file"}:
            raise ValueError(
                f"give one of script (with script_file), rounds or rules, not {' and '.join(given)}"
            )
        if self.rules is not None and "on_exhausted" in self.model_fields_set:
            raise ValueError(
                "on_exhausted does not apply to rules: add a rule with an empty `when` "
                "as a fallback"
            )
        return self


def _usage(data: _UsageOptions | None) -> Usage | None:
    if data is None:
        return None
    # Usage.of: built compactly (a scripted agent keeps one per assistant message)
    return Usage.of(
        data.prompt,
        data.completion,
        total=data.total,
        cache_read=data.cache_read,
        cache_write=data.cache_write,
        uncached_input=data.uncached_input,
        reasoning=data.reasoning,
    )


def _reply(options: _ReplyOptions) -> Reply:
    error: ProviderError | None = None
    if options.error is not None:
        status = int(options.error.get("status", 500))
        body = {
            "error": {
                "type": options.error.get("type"),
                "message": options.error.get("message", "scripted failure"),
            }
        }
        error = error_from_status(status, body, {}, provider="scripted")
    return Reply(
        text=options.text,
        reasoning=options.reasoning,
        tool_calls=tuple(ScriptedCall(c.name, c.arguments, c.id) for c in options.tool_calls),
        usage=_usage(options.usage),
        delay=options.delay,
        chunk_size=options.chunk_size,
        error=error,
        stop_reason=options.stop_reason,
    )


class ScriptedProvider:
    """A provider that answers from a script (see the module docs)."""

    kind = "scripted"

    def __init__(
        self,
        script: Iterable[Reply | str] = (),
        *,
        on_exhausted: Literal["error", "repeat"] = "error",
        capabilities: Capabilities | None = None,
        checkpoint: Literal["chunk", "reply"] = "chunk",
        rounds: Iterable[Reply | str] | None = None,
        rules: Iterable[Rule] | None = None,
        name: str = "scripted",
        models: Iterable[str] | None = None,
    ) -> None:
        if checkpoint not in ("chunk", "reply"):
            raise ValueError(f'checkpoint must be "chunk" or "reply", not {checkpoint!r}')
        self.checkpoint: Literal["chunk", "reply"] = checkpoint
        self.script: list[Reply] = [_as_reply(r) for r in script]
        if (rounds is not None) + (rules is not None) + bool(self.script) > 1:
            raise ValueError("give one of script, rounds or rules")
        self.rounds: tuple[Reply, ...] | None = (
            None if rounds is None else tuple(_as_reply(r) for r in rounds)
        )
        self.rules: tuple[Rule, ...] | None = None if rules is None else tuple(rules)
        self.name = name
        #: the models it answers as (None: any); a request for another fails with a 404
        self.models: frozenset[str] | None = None if models is None else frozenset(models)
        self.on_exhausted = on_exhausted
        self.requests: list[ModelRequest] = []
        self._capabilities = capabilities or Capabilities(
            structured_output="native",
            tool_choice=True,
            parallel_tool_calls=True,
            streaming=True,
            vendor_endpoint=True,
        )
        self._next = 0
        self._calls = 0
        self.closed = False

    def add(self, *replies: Reply | str) -> None:
        """Append replies to the script."""
        if self.rounds is not None or self.rules is not None:
            raise ValueError("add() extends a script; this provider answers by rounds or rules")
        self.script.extend(_as_reply(r) for r in replies)

    @property
    def remaining(self) -> int:
        return len(self.script) - self._next

    def capabilities(self, model: str) -> Capabilities:
        return self._capabilities

    def lists_model(self, model: str) -> bool:
        """Does it answer as ``model`` (every model when no ``models`` were given)?"""
        return self.models is None or model in self.models

    def _take(self, request: ModelRequest) -> Reply:
        self.requests.append(request)
        effort = resolve_effort_level(
            request.reasoning_effort, self.capabilities(request.model).reasoning_effort
        )
        level = effort.effective
        report_effort(effort.sent({"reasoning_effort": level}) if level is not None else effort)
        if not self.lists_model(request.model):
            body = {"error": {"type": "not_found_error", "message": f"no model {request.model}"}}
            raise error_from_status(404, body, {}, provider=self.name)
        if self.rounds is not None:
            return choose_by_round(
                self.rounds,
                request,
                provider=self.name,
                repeat_last=self.on_exhausted == "repeat",
            )
        if self.rules is not None:
            return choose_by_rule(self.rules, request, provider=self.name)
        if self._next >= len(self.script):
            if self.on_exhausted == "repeat" and self.script:
                return self.script[-1]
            raise ScriptExhaustedError(
                f"the scripted provider has no reply left for request {len(self.requests)} "
                f"(the script has {len(self.script)})"
            )
        reply = self.script[self._next]
        self._next += 1
        return reply

    def _chunks(self, reply: Reply, request: ModelRequest) -> list[StreamChunk]:
        if self.rounds is not None or self.rules is not None:
            # numbered from the request, so another process numbers them the same
            return reply.chunks(calls_before(request))
        chunks = reply.chunks(self._calls)
        self._calls += len(reply.tool_calls)
        return chunks

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        signal.raise_if_cancelled()
        reply = self._take(request)
        if reply.error is not None and reply.fail_after_chunks is None:
            raise reply.error
        if reply.delay:
            with signal.scope():
                await anyio.sleep(reply.delay)
            signal.raise_if_cancelled()
        assembler = StreamAssembler()
        for chunk in self._chunks(reply, request):
            assembler.feed(chunk)
        if reply.error is not None:
            raise reply.error
        return ModelResponse(message=assembler.message(), served_model=request.model)

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamChunk]:
        signal.raise_if_cancelled()
        reply = self._take(request)
        if reply.error is not None and reply.fail_after_chunks is None:
            raise reply.error
        per_chunk = self.checkpoint == "chunk"
        if not per_chunk and not reply.delay:
            await anyio.lowlevel.checkpoint()  # the whole reply arrives at once
        for number, chunk in enumerate(self._chunks(reply, request)):
            if reply.error is not None and number == reply.fail_after_chunks:
                raise reply.error
            if reply.delay:
                with signal.scope():
                    await anyio.sleep(reply.delay)
            elif per_chunk:
                await anyio.lowlevel.checkpoint()  # a real stream yields between chunks
            signal.raise_if_cancelled()
            yield chunk

    async def check_ready(self) -> None:
        """Always ready: the script is in memory (the :class:`~agentrig.llm.ReadinessCheck`
        protocol, so a server's ``/ready`` reports it checked)."""

    async def aclose(self) -> None:
        self.closed = True


def _as_reply(reply: Reply | str) -> Reply:
    return Reply(text=reply) if isinstance(reply, str) else reply


def _rule(options: _RuleOptions) -> Rule:
    when = options.when
    return Rule(
        _reply(options.reply),
        round=when.round,
        last_user_contains=when.last_user_contains,
        last_tool_result_contains=when.last_tool_result_contains,
    )


@with_options(ScriptedOptions)
def factory(config: ProviderConfig) -> ScriptedProvider:
    """Entry point ``scripted`` of ``agentrig.providers``."""
    options = ScriptedOptions.model_validate(dict(config.options))
    replies = [_reply(r) for r in options.script]
    if options.script_file is not None:
        raw = json.loads(Path(options.script_file).read_text(encoding="utf-8"))
        if isinstance(raw, dict) and set(raw) <= {"script"}:
            raw = raw.get("script", [])
        if not isinstance(raw, list):  # another key would be dropped, not read
            raise ValueError(
                f"script_file {options.script_file!r} must hold a list of replies or "
                f'{{"script": [...]}}, not {type(raw).__name__}'
                + (f" with keys {sorted(raw)}" if isinstance(raw, dict) else "")
            )
        items: Sequence[Any] = raw
        replies += [_reply(_ReplyOptions.model_validate(item)) for item in items]
    return ScriptedProvider(
        replies,
        rounds=None if options.rounds is None else [_reply(r) for r in options.rounds],
        rules=None if options.rules is None else [_rule(r) for r in options.rules],
        name=config.id,
        on_exhausted=options.on_exhausted,
        capabilities=Capabilities(
            structured_output=options.structured_output,
            tool_choice=True,
            parallel_tool_calls=True,
            streaming=True,
            vendor_endpoint=True,
            reasoning_effort=(
                None if options.reasoning_effort is None else tuple(options.reasoning_effort)
            ),
        ),
        checkpoint=options.checkpoint,
        models=options.models,
    )
