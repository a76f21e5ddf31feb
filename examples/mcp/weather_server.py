"""A small MCP server (the SDK's MCPServer, over stdio) that the example's agent uses.

Any MCP server works the same way -- one from PyPI or npm, configured in ``.mcp.json`` or
``agentrig.toml``.  This one is offline: its forecast is made up.
"""

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("weather", log_level="WARNING")

FORECASTS = {"lisbon": "21 °C and sunny", "oslo": "4 °C and sleet"}


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def forecast(city: str) -> str:
    """Today's forecast for a city."""
    return FORECASTS.get(city.lower(), "no forecast for that city")


@app.resource("weather://cities", mime_type="text/plain")
def cities() -> str:
    """The cities this server knows."""
    return ", ".join(sorted(FORECASTS))


@app.prompt()
def packing_list(city: str) -> str:
    """Ask what to pack for a trip."""
    return f"I am travelling to {city} today. Check the forecast and tell me what to pack."


if __name__ == "__main__":
    app.run("stdio")
