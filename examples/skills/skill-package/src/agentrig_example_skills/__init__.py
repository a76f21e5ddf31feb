"""Skills shipped as a Python distribution (see the entry points in pyproject.toml)."""
