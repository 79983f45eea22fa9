"""The error vocabulary is the core's: every kind of ``ErrorKind::ALL`` has its class, its name
and its JSON-RPC code, and an error reads the same (``kind``, ``code``, ``message``, ``data``)
whether it was raised here or came back from a peer."""

from __future__ import annotations

import pytest

from mcpaxle import Client, Server, _native, errors
from mcpaxle.errors import ForkError, InputRequired, InvalidParams, McpError, MissingCapability, UsageError


def test_every_core_kind_has_its_class_and_code_and_back() -> None:
    kinds = _native.error_kinds()
    assert len(kinds) == len({name for name, _ in kinds}) >= 16
    assert list(errors.KINDS.items()) == kinds
    for name, code in kinds:
        cls = errors.class_for_kind(name)
        assert cls.kind == name
        e = cls("m")
        assert (e.kind, e.code, e.message, e.data) == (name, code, "m", None)
        assert issubclass(cls, InputRequired if name == "input_required" else McpError)
    for exported in errors.__all__:
        cls = getattr(errors, exported)
        if isinstance(cls, type) and issubclass(cls, (McpError, InputRequired)):
            assert cls.kind in errors.KINDS, exported
            assert cls.default_code == errors.KINDS[cls.kind], exported


def test_names_are_the_core_names() -> None:
    assert errors.class_for_kind("invalid_params") is InvalidParams
    assert InvalidParams("x").code == -32602
    assert MissingCapability.requires("sampling").kind == "missing_required_client_capability"
    assert ForkError("x").kind == "usage" and issubclass(ForkError, UsageError)
    with pytest.raises(ValueError, match="unknown error kind 'InvalidParams'"):
        errors.class_for_kind("InvalidParams")


def test_a_class_with_a_kind_the_core_lacks_is_refused() -> None:
    with pytest.raises(TypeError, match="not a kind of the core's errors"):

        class Nope(McpError):
            kind = "nope"


async def test_an_error_reads_the_same_after_crossing_the_wire() -> None:
    server = Server("errors")

    @server.tool()
    def bad() -> str:
        raise InvalidParams("the city is unknown", data={"city": "Atlantis"})

    @server.tool()
    def needs_sampling() -> str:
        raise MissingCapability.requires("sampling")

    running = await server.start_http("127.0.0.1", 0)
    try:
        async with await Client.connect_http(running.url or "") as client:
            with pytest.raises(InvalidParams) as e:
                await client.call_tool("bad")
            assert (e.value.kind, e.value.code, e.value.message, e.value.data) == (
                "invalid_params",
                -32602,
                "the city is unknown",
                {"city": "Atlantis"},
            )
            with pytest.raises(MissingCapability) as m:
                await client.call_tool("needs_sampling")
            assert (m.value.kind, m.value.code) == ("missing_required_client_capability", -32021)
            assert m.value.data == {"requiredCapabilities": {"sampling": {}}}
    finally:
        await running.stop()
