"""Deferral: the offer plan, its two refused invariants, tool_search and direct invocation."""

from __future__ import annotations

import pytest

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.tools import FunctionTool, tool
from agentrig.tools.deferral import DeferralError, DeferralPolicy, plan_offer
from agentrig.tools.schema import SchemaValidationError


def _tool(
    name: str, description: str = "Does a thing.", deferred: bool | None = None
) -> FunctionTool:
    def body(x: int = 0) -> str:
        return f"{name}:{x}"

    return tool(id=name, description=description, risk="inspect", deferred=deferred)(body)


SEARCH = _tool("tool_search", "Search deferred tools.")


def _ids(tools: tuple[FunctionTool, ...] | tuple[object, ...]) -> list[str]:
    return [t.id for t in tools]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("count", "policy", "with_search", "offered", "engaged"),
    [
        (3, DeferralPolicy(), False, 3, False),  # below the threshold: untouched
        (3, DeferralPolicy(mode="off"), False, 3, False),
        (25, DeferralPolicy(mode="off"), False, 25, False),  # explicit off beats the threshold
        (25, DeferralPolicy(), True, 1, True),  # past the threshold: only the search stays
        (3, DeferralPolicy(mode="on"), True, 1, True),  # explicit on beats the threshold
        (5, DeferralPolicy(max_resident=3), True, 1, True),
    ],
)
def test_plan_offer_threshold_and_explicit_modes(
    count: int, policy: DeferralPolicy, with_search: bool, offered: int, engaged: bool
) -> None:
    tools = [_tool(f"t{i}") for i in range(count)]
    if with_search:
        tools.append(SEARCH)
    resident = {"t0": False} if engaged else {}
    plan = plan_offer(tools, policy=policy, overrides=resident)
    expected = offered + (1 if engaged else 0)  # t0 stays resident when deferral engages
    assert len(plan.offered) == expected
    assert plan.engaged is engaged
    assert len(plan.offered) + len(plan.withheld) == len(tools)


def test_schema_share_engages_deferral_for_few_but_large_tools() -> None:
    tools = [_tool(f"t{i}", "x" * 4000) for i in range(3)] + [SEARCH]
    plan = plan_offer(tools, context_window=10_000, overrides={"t0": False})
    assert _ids(plan.withheld) == ["t1", "t2"]


def test_a_tools_own_deferred_flag_wins_below_the_threshold() -> None:
    tools = [_tool("a"), _tool("b", deferred=True), SEARCH]
    plan = plan_offer(tools)
    assert _ids(plan.withheld) == ["b"]
    assert _ids(plan.offered) == ["a", "tool_search"]


def test_withholding_without_a_search_tool_is_refused() -> None:
    with pytest.raises(DeferralError, match="tool_search"):
        plan_offer([_tool("a"), _tool("b", deferred=True)])


def test_deferring_everything_is_refused() -> None:
    with pytest.raises(DeferralError, match="resident"):
        plan_offer([_tool("a"), _tool("b"), SEARCH], policy=DeferralPolicy(mode="on"))


def test_loaded_tools_are_offered_again() -> None:
    tools = [_tool("a", deferred=False), _tool("b"), _tool("c"), SEARCH]
    plan = plan_offer(tools, policy=DeferralPolicy(mode="on"), loaded={"c"})
    assert _ids(plan.withheld) == ["b"]
    assert "c" in _ids(plan.offered)


@pytest.mark.anyio
async def test_tool_search_loads_a_deferred_tool_for_the_next_round() -> None:
    tools = [_tool(f"t{i}") for i in range(25)] + [_tool("weather", "Reports the weather.")]
    provider = ScriptedProvider(
        [
            Reply(tool_calls=(ScriptedCall("tool_search", {"query": "weather"}),)),
            Reply(tool_calls=(ScriptedCall("weather", {"x": 2}),)),
            Reply(text="sunny"),
        ]
    )
    memory = agentrig.MemorySource()
    for t in tools:
        memory.add("tools", t.id, t)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {
            "a": {
                "provider": "local",
                "model": "m",
                "tools": [*(t.id for t in tools), "tool_search"],
            }
        },
        "tools": {"t0": {"deferred": False}},
    }
    async with agentrig.open_runtime(
        config, memory=memory, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        result = await rt.agent(AgentId("a")).run("weather?")
        offered = [[spec.name for spec in r.tools] for r in provider.requests]
        # round 1: the resident tool and the search; round 2 (re-read): weather is loaded
        assert offered[0] == ["t0", "tool_search"]
        assert offered[1] == ["t0", "weather", "tool_search"]
        assert result.value == "sunny"
        # direct invocation reaches a still-deferred tool through the same path
        direct = await rt.agent(AgentId("a")).call_tool("t5", {"x": 1})
        assert direct.value.text == "t5:1"
        assert direct.invocation.executed
        with pytest.raises(SchemaValidationError):  # one error channel: a failure raises
            await rt.agent(AgentId("a")).call_tool("t5", {"x": "not a number"})


def test_the_automatic_threshold_without_a_search_tool_offers_every_tool() -> None:
    # many tools (or huge schemas) from a server must not stop an agent without tool_search
    tools = [_tool(f"t{i}", "x" * 4000) for i in range(30)]
    plan = plan_offer(tools, context_window=10_000)
    assert plan.withheld == ()
    assert _ids(plan.offered) == [f"t{i}" for i in range(30)]
    assert not plan.engaged
