"""Type hints to JSON Schema, docstrings to descriptions, return annotations to
outputSchema, and JSON arguments back to the annotated Python types."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

import pytest

from mcpaxle import Context, Field, Image, Server
from mcpaxle._schema import converter, output_schema, params_of, parse_docstring, schema_of
from mcpaxle.errors import UsageError


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(TypedDict):
    x: int
    y: int


class Partial(TypedDict, total=False):
    label: str


@dataclasses.dataclass
class Address:
    street: str
    city: str = "Paris"


@dataclasses.dataclass
class Person:
    """A person."""

    name: str
    address: Address
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Node:
    value: int
    children: list[Node] = dataclasses.field(default_factory=list)


@pytest.mark.parametrize(
    "hint, schema",
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (type(None), {"type": "null"}),
        (Any, {}),
        (bytes, {"type": "string", "contentEncoding": "base64"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (tuple[int, str], {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (dict, {"type": "object"}),
        (Optional[int], {"type": ["integer", "null"]}),
        (int | None, {"type": ["integer", "null"]}),
        (Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1], {"type": "integer", "const": 1}),
        (Color, {"type": "string", "enum": ["red", "green"], "title": "Color"}),
        (datetime.datetime, {"type": "string", "format": "date-time"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (Annotated[str, "A city"], {"type": "string", "description": "A city"}),
        (Annotated[int, Field(description="Days", ge=1, le=14)], {"type": "integer", "description": "Days", "minimum": 1, "maximum": 14}),
        (Annotated[list[int], Field(min_length=1)], {"type": "array", "items": {"type": "integer"}, "minItems": 1}),
    ],
)
def test_schema_of_each_hint(hint: Any, schema: dict[str, Any]) -> None:
    assert schema_of(hint) == schema


def test_typeddict() -> None:
    assert schema_of(Point) == {
        "type": "object",
        "title": "Point",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    assert "required" not in schema_of(Partial)


def test_dataclass_nested_defaults_and_docstring() -> None:
    s = schema_of(Person)
    assert s["description"] == "A person."
    assert s["required"] == ["name", "address"]
    assert s["properties"]["address"]["properties"]["city"] == {"type": "string", "default": "Paris"}
    assert s["properties"]["address"]["required"] == ["street"]
    assert s["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}


def test_recursive_dataclass_uses_defs() -> None:
    s = schema_of(Node)
    assert s == {"$ref": "#/$defs/Node", "$defs": {"Node": s["$defs"]["Node"]}}
    assert s["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


def test_pydantic_model() -> None:
    import pydantic  # pinned in requirements-dev.txt: a missing pydantic is a failure, not a skip

    class Inner(pydantic.BaseModel):
        n: int

    class Outer(pydantic.BaseModel):
        name: str = pydantic.Field(description="The name")
        inner: Inner

    async def f(o: Outer) -> Outer: ...

    p = params_of(f, localns=locals())
    assert p.schema["properties"]["o"]["properties"]["name"]["description"] == "The name"
    assert p.schema["properties"]["o"]["properties"]["inner"] == {"$ref": "#/$defs/Inner"}
    assert "Inner" in p.schema["$defs"]
    value = p.converters["o"]({"name": "x", "inner": {"n": 1}})
    assert isinstance(value, Outer) and value.inner.n == 1
    schema, wrapped = output_schema(Outer)
    assert schema is not None and not wrapped and schema["type"] == "object"


def test_unsupported_type_is_a_usage_error() -> None:
    class Opaque:
        pass

    with pytest.raises(UsageError, match="cannot make a JSON Schema"):
        schema_of(Opaque)


def test_params_skip_context_and_read_docstring() -> None:
    async def forecast(city: str, days: int = 3, unit: Literal["C", "F"] = "C", ctx: Context | None = None) -> str:
        """Forecast for a city.

        Args:
            city: The city name.
            days: How many days ahead,
                at most 14.
        """

    p = params_of(forecast)
    assert p.ctx == "ctx"
    assert p.description == "Forecast for a city."
    assert p.schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city name."},
            "days": {"type": "integer", "description": "How many days ahead, at most 14.", "default": 3},
            "unit": {"type": "string", "enum": ["C", "F"], "default": "C"},
        },
        "required": ["city"],
    }


def test_field_as_default() -> None:
    def f(days: int = Field(3, description="Days")) -> None: ...

    p = params_of(f)
    assert p.schema["properties"]["days"] == {"type": "integer", "description": "Days", "default": 3}
    assert p.required == []


@pytest.mark.parametrize(
    "doc, description, params",
    [
        (":param a: first\n:param b: second\nDoes things.", "Does things.", {"a": "first", "b": "second"}),
        ("Sums.\n\nParameters\n----------\na : int\n    The first.\nb : int\n    The second.\n\nReturns\n-------\nint", "Sums.\n\nReturns\n-------\nint", {"a": "The first.", "b": "The second."}),
        ("Sums.\n\nArgs:\n    a (int): The first.\n    b: The second.\n\nReturns:\n    The sum.", "Sums.\n\nReturns:\n    The sum.", {"a": "The first.", "b": "The second."}),
    ],
)
def test_docstring_styles(doc: str, description: str, params: dict[str, str]) -> None:
    assert parse_docstring(doc) == (description, params)


@pytest.mark.parametrize(
    "hint, schema, wrapped",
    [
        (str, None, False),
        (None, None, False),
        (Image, None, False),
        (list, None, False),
        (list[Image], None, False),
        (Union[str, Image], None, False),
        (int, {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}, True),
        (list[int], {"type": "object", "properties": {"result": {"type": "array", "items": {"type": "integer"}}}, "required": ["result"]}, True),
        (dict, {"type": "object"}, False),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}, False),
        (Point, schema_of(Point), False),
    ],
)
def test_output_schema(hint: Any, schema: dict[str, Any] | None, wrapped: bool) -> None:
    assert output_schema(hint) == (schema, wrapped)


def test_converters() -> None:
    assert converter(str) is None and converter(int) is None and converter(list[str]) is None
    assert converter(float)(3) == 3.0 and isinstance(converter(float)(3), float)
    assert converter(Color)("red") is Color.RED
    assert converter(Optional[Color])(None) is None
    assert converter(list[Color])(["red", "green"]) == [Color.RED, Color.GREEN]
    assert converter(set[int])([1, 1, 2]) == {1, 2}
    assert converter(tuple[int, Color])([1, "red"]) == (1, Color.RED)
    assert converter(datetime.datetime)("2026-07-28T10:00:00Z") == datetime.datetime(2026, 7, 28, 10, tzinfo=datetime.timezone.utc)
    assert converter(bytes)("aGk=") == b"hi"
    person = converter(Person)({"name": "Ann", "address": {"street": "Main"}})
    assert person == Person("Ann", Address("Main"))


def test_tool_definitions_from_the_decorator() -> None:
    server = Server("schemas")

    @dataclasses.dataclass
    class Forecast:
        city: str
        temperature: float

    @server.tool(title="Forecast", annotations={"read_only": True, "openWorldHint": False})
    async def forecast(city: Annotated[str, "City name"], days: int = 3) -> Forecast:
        """Forecast for a city."""
        return Forecast(city, 20.0)

    @server.tool
    def plain(n: int) -> str:
        return str(n)

    tools = {t["name"]: t for t in server.list_tools()}
    f = tools["forecast"]
    assert f["title"] == "Forecast"
    assert f["description"] == "Forecast for a city."
    assert f["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert f["inputSchema"]["properties"]["city"] == {"type": "string", "description": "City name"}
    assert f["outputSchema"]["required"] == ["city", "temperature"]
    assert "outputSchema" not in tools["plain"] and "description" not in tools["plain"]
    assert plain(2) == "2"  # the decorator returns the function unchanged


def test_bad_definitions_fail_at_registration() -> None:
    server = Server("bad")
    with pytest.raises(UsageError, match="not variables of the URI"):

        @server.resource("note://{id}")
        def note(name: str) -> str: ...

    with pytest.raises(UsageError, match="unusable inputSchema"):
        server.add_tool(lambda: "x", "external", input_schema={"type": "object", "$ref": "https://example.invalid/schema.json"})
