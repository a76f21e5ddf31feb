"""The project's checks: run with `python3 check.py`."""

import sys

sys.path.insert(0, "src")

import calc

assert calc.add(2, 3) == 5, f"add(2, 3) should be 5, got {calc.add(2, 3)}"
assert calc.mul(2, 3) == 6
print("all checks pass")
