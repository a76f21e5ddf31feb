"""The speed path of :func:`protocol_problems`: a method taking exactly the declared
parameters is not read with ``inspect.signature`` -- and is judged as the full check judges it."""

from __future__ import annotations

import functools
import inspect
import itertools
from typing import Any

import pytest

from agentrig.kernel._contracts import _call_problem, _shape

SHAPES = [
    "def f(self, a): ...",
    "def f(this, a): ...",
    "def f(self, b): ...",
    "def f(self, a, b=1): ...",
    "def f(self, a, /): ...",
    "def f(self, a, /, b, *, c): ...",
    "def f(self, *, a): ...",
    "def f(self, *args): ...",
    "def f(self, **kw): ...",
    "def f(self, a, *args, b, **kw): ...",
    "def f(self, a, *rest, b, **kw): ...",
    "def f(self): ...",
    "def f(self):\n    a = 1\n    return a",
    "async def f(self, a): ...",
    "async def f(self, a, *, signal=None): ...",
]


def _function(source: str) -> Any:
    space: dict[str, Any] = {}
    exec(source, space)  # a real function of that shape, with its own code object
    return space["f"]


def _bound(function: Any) -> Any:
    holder = type("Holder", (), {"f": function})
    return holder().f


@pytest.mark.parametrize(("declared", "given"), list(itertools.product(SHAPES, SHAPES)))
def test_the_speed_path_judges_as_the_full_check(declared: str, given: str) -> None:
    found = _function(given)
    reference = _function(given)
    # a declared signature makes the function not plain: the full check reads it
    reference.__signature__ = inspect.signature(reference)
    assert _shape(reference) is None
    problem = _call_problem("f", _function(declared), _bound(found))
    assert problem == _call_problem("f", _function(declared), _bound(reference))
    if declared == given:
        assert _shape(_function(declared)) == _shape(found)  # the speed path was taken
        assert problem is None


def test_only_plain_functions_with_a_first_parameter_have_a_shape() -> None:
    plain = _function("def f(self, a): ...")

    @functools.wraps(plain)
    def wrapped(*args: Any) -> None: ...

    assert _shape(plain) is not None
    assert _shape(wrapped) is None  # it reads as the function it wraps: the full check
    assert _shape(_function("def f(): ...")) is None
    assert _shape(functools.partial(plain, None)) is None
    assert _shape(len) is None
