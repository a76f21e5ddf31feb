"""The quickstart's two tools: ordinary typed functions turned into tools by ``@tool``.

The docstring is what the model reads; the parameters become the input schema (pydantic
validates the model's arguments before the function runs).
"""

from __future__ import annotations

from agentrig.tools import tool

# A tiny offline "weather service" so the demo needs no network.
_WEATHER = {
    "lisbon": {"city": "Lisbon", "celsius": 21.0, "conditions": "sunny", "rain_chance": 0.05},
    "oslo": {"city": "Oslo", "celsius": 4.0, "conditions": "drizzle", "rain_chance": 0.8},
}


@tool(risk="inspect")
def get_weather(city: str) -> dict[str, object]:
    """Current weather for a city: temperature in Celsius, conditions, chance of rain."""
    found = _WEATHER.get(city.strip().lower())
    if found is None:
        raise ValueError(f"no weather data for {city!r} (try Lisbon or Oslo)")
    return found


@tool(risk="inspect")
def convert_temperature(celsius: float) -> str:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return f"{celsius * 9 / 5 + 32:.1f} °F"
