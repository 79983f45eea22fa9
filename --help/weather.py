from dataclasses import dataclass
from typing import Annotated

from mcpaxle import Context, Image, Server, ToolError

server = Server("weather", version="1.0.0", instructions="Forecasts by city.",
                cache={"tools": (60_000, "public")})

@dataclass
class Forecast:
    city: str
    celsius: float

@server.tool(annotations={"read_only": True})
async def forecast(city: Annotated[str, "City name"], days: int = 3, ctx: Context | None = None) -> Forecast:
    """Forecast for a city."""
    if city == "Atlantis":
        raise ToolError("no forecast under the sea")      # the model reads this
    if ctx:
        await ctx.progress(1, 1)
    return Forecast(city, 21.5)                              # structuredContent + its JSON text

@server.tool()
def chart(city: str) -> Image:                               # a plain def runs on a thread pool
    return Image(path="chart.png")

@server.resource("note://{id}")                              # a template: id is a URI variable
def note(id: int) -> str:
    return f"note {id}"

@server.prompt()
def review(code: str) -> str:
    return f"Review this code:\n{code}"

@server.tool()
async def book(ctx: Context) -> str:
    # MRTR: runs again from the start once the client has answered (see Context).
    answer = await ctx.elicit("Which date?", {"date": str})
    return f"booked for {answer.content['date']}" if answer.accepted else "cancelled"

if __name__ == "__main__":
    server.run()                          # stdio; server.run("http", port=8000) serves /mcp
