"""Structured output: how a run asks for a pydantic model and checks the answer.

The schema travels the way the provider declares it can carry it (native, JSON mode, or an
instruction in the prompt); the answer is validated against the model, and a bounded number
of retry turns carry the validation issues back to the model.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from agentrig.agent._results import StructuredOutputError
from agentrig.cancel import CancelSignal
from agentrig.errors import Issue
from agentrig.llm import Provider, ResponseFormat, UserMessage, capability

if TYPE_CHECKING:
    from agentrig.agent._driver import RunOptions
    from agentrig.agent._port import AgentPort
    from agentrig.agent._turn_state import Emit, TurnOutcome

__all__ = ["finish_structured", "structured_instruction", "structured_transport"]


def structured_transport(
    options: RunOptions, provider: Provider, model: str
) -> tuple[ResponseFormat | None, Literal["native", "json_mode", "prompt"] | None]:
    if options.output_type is None:
        return None, None
    fmt = ResponseFormat.model_validate(
        {
            "name": options.output_type.__name__,
            "schema": options.output_type.model_json_schema(),
            "strict": True,
        }
    )
    declared = capability(provider, model, "structured_output")
    if declared is None:
        return fmt, None  # silence is not absence: send unchanged, the provider decides
    if declared == "native":
        return fmt, "native"
    if declared == "json_mode":
        return fmt, "json_mode"
    return None, "prompt"


def structured_instruction(options: RunOptions, provider: Provider, model: str) -> str | None:
    """The schema instruction for transports that cannot carry the schema themselves.

    Decided from the same provider and model as :func:`structured_transport` -- the ones
    the request actually goes to after ``request_config`` -- so the schema always reaches
    the model one way or the other.
    """
    if options.output_type is None:
        return None
    declared = capability(provider, model, "structured_output")
    if declared == "native" or declared is None:
        return None
    schema = json.dumps(options.output_type.model_json_schema(), separators=(",", ":"))
    return (
        "Reply with a single JSON value that validates against this JSON Schema, "
        f"and nothing else: {schema}"
    )


async def finish_structured(
    port: AgentPort,
    outcome: TurnOutcome,
    options: RunOptions,
    signal: CancelSignal,
    emit: Emit | None,
) -> tuple[Any, int]:
    if (
        options.output_type is None
        or outcome.interrupted
        or outcome.stop_reason
        or outcome.response_failure is not None  # a refusal is not an answer to validate
    ):
        return outcome.text, 0
    from agentrig.agent._turn import run_turn  # the turn (its model call) imports this one

    model = options.output_type
    attempts = 1
    while True:
        text = outcome.text
        issues = _validate_output(model, text)
        if not issues:
            return model.model_validate_json(_json_part(text)), attempts
        if attempts > options.output_retries:
            raise StructuredOutputError(
                f"the answer did not match {model.__name__} after {attempts} attempt(s)",
                issues=issues,
                attempts=attempts,
                text=text,
            )
        attempts += 1
        feedback = UserMessage.of(
            "Your previous answer did not validate against the required schema: "
            + "; ".join(str(i) for i in issues)
            + ". Reply again with only the corrected JSON.",
            source="structured-output",
        )
        retry = await run_turn(port, (feedback,), "prompt", options, signal, emit)
        outcome.usages.extend(retry.usages)
        outcome.compaction_usages.extend(retry.compaction_usages)
        outcome.rounds += retry.rounds
        outcome.final = retry.final
        outcome.interrupted = retry.interrupted
        outcome.timed_out = retry.timed_out
        outcome.response_failure = retry.response_failure
        outcome.refused.extend(retry.refused)
        if retry.interrupted or retry.response_failure is not None:
            return outcome.text, attempts


def _json_part(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`")
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else stripped
        if stripped.lower().startswith("json"):
            stripped = stripped[4:]
    return stripped.strip()


def _validate_output(model: type[BaseModel], text: str) -> list[Issue]:
    try:
        model.model_validate_json(_json_part(text))
    except ValidationError as exc:
        return [
            Issue(
                code=str(e["type"]),
                message=str(e["msg"]),
                path=tuple(p for p in e["loc"] if isinstance(p, str | int)),
            )
            for e in exc.errors(include_url=False)
        ]
    return []
