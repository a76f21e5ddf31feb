"""agentrig-example-rival: a second distribution registering the tool name ``greet``."""

__version__ = "0.2.0"
