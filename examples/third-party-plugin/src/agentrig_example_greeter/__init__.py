"""agentrig-example-greeter: a third-party agentrig plugin, written against the public API only.

Importing this package imports nothing else; agentrig imports each contribution (listener,
tool, variant) the first time a composition needs it, through the entry points declared in
``pyproject.toml``.
"""

__version__ = "0.1.0"
