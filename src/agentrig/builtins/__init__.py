"""Built-in plugins and composition steps of the core distribution.

Every built-in contribution is registered through the core's own entry points (see
``pyproject.toml``), so it is listed, disabled and replaced like any third-party plugin.
"""
