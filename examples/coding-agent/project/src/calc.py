"""A tiny calculator with one bug for the coding agent to find."""


def add(a: int, b: int) -> int:
    return a - b


def mul(a: int, b: int) -> int:
    return a * b
