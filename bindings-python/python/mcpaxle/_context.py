"""The request context handed to handlers that ask for it (a parameter annotated ``Context``)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import typing
from typing import Any, Generator, Literal

from . import _native
from .errors import InputRequired, UsageError

__all__ = ["Context", "ElicitResult", "Root", "SampleResult"]

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class _Done:
    """What ``progress`` and ``log`` return: they act at once, and awaiting the result is
    allowed (and does nothing), so both ``ctx.info(...)`` and ``await ctx.info(...)`` work."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return iter(())

    def __repr__(self) -> str:
        return "<done>"


_DONE = _Done()


@dataclasses.dataclass
class ElicitResult:
    """The client's answer to an elicitation."""

    #: "accept", "decline" or "cancel".
    action: str
    #: The submitted form (accept only).
    content: dict[str, Any] | None
    #: ``content`` converted to the type given as the schema (a dataclass, TypedDict or
    #: pydantic model), when the user accepted.
    data: Any = None

    @property
    def accepted(self) -> bool:
        """Whether the user accepted (submitted the form)."""
        return self.action == "accept"


@dataclasses.dataclass
class SampleResult:
    """The client's answer to a sampling request (``CreateMessageResult``)."""

    role: str
    content: Any
    model: str
    stop_reason: str | None
    #: The whole result as sent.
    raw: dict[str, Any]

    @property
    def text(self) -> str:
        """The text of the answer (text blocks joined), or "" when there is none."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


@dataclasses.dataclass
class Root:
    """A root the client exposes (a directory or another URI)."""

    uri: str
    name: str | None = None


def _elicitation_schema(schema: Any) -> tuple[dict[str, Any], Any]:
    """The ``requestedSchema`` for a raw schema, a mapping of names to types, or a type
    (dataclass, TypedDict, pydantic model); and the type to convert answers to."""
    from ._schema import converter, schema_of

    if schema is None:
        return {"type": "object", "properties": {}}, None
    if isinstance(schema, dict) and "type" in schema:
        return schema, None
    if isinstance(schema, dict):
        props, required = {}, []
        for name, tp in schema.items():
            s = schema_of(tp)
            if not _optional(s):
                required.append(name)
            props[name] = _primitive(s)
        out: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        return out, None
    s = schema_of(schema)
    out = {"type": "object", "properties": {k: _primitive(v) for k, v in s.get("properties", {}).items()}}
    if s.get("required"):
        out["required"] = s["required"]
    return out, converter(schema) or dict


def _optional(s: dict[str, Any]) -> bool:
    t = s.get("type")
    return (isinstance(t, list) and "null" in t) or any(a.get("type") == "null" for a in s.get("anyOf", []))


def _primitive(s: dict[str, Any]) -> dict[str, Any]:
    """A property schema reduced to what elicitation allows (no null, no anyOf of one)."""
    t = s.get("type")
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        s = {**s, "type": rest[0] if len(rest) == 1 else rest}
    arms = [a for a in s.get("anyOf", []) if a.get("type") != "null"]
    if "anyOf" in s and len(arms) == 1:
        s = {**{k: v for k, v in s.items() if k != "anyOf"}, **arms[0]}
    return s


def _messages(messages: Any) -> list[dict[str, Any]]:
    from ._content import Message
    from ._convert import content_block

    if isinstance(messages, (str, Message)) or (isinstance(messages, dict) and "role" in messages):
        messages = [messages]
    out = []
    for m in messages:
        if isinstance(m, Message):
            out.append({"role": m.role, "content": content_block(m.content)})
        elif isinstance(m, dict) and "role" in m:
            out.append(m)
        else:
            out.append({"role": "user", "content": content_block(m)})
    return out


class Context:
    """The context of one request: metadata, progress, logs, cancellation, and the asks of
    Multi Round-Trip Requests (MRTR).

    Declare a parameter annotated ``Context`` (``ctx: Context``) and the handler receives it;
    it is not part of the tool's input schema.

    **The replay model.** ``await ctx.elicit(...)``, ``ctx.sample(...)`` and
    ``ctx.list_roots(...)`` ask the client for input under a *key*. If the request already
    carries the answer (a retry with ``inputResponses``, or answers sealed in
    ``requestState`` by an earlier round) the ask returns it at once. Otherwise it raises
    :class:`~mcpaxle.errors.InputRequired`: let it propagate. The server answers with an
    ``InputRequiredResult`` listing every ask made in this run (asks gathered with
    ``asyncio.gather`` land in the same round), the client answers them and retries the
    original request, and **the handler runs again from the start**. So code before an ask
    runs once per round: keep side effects after the asks, or make them idempotent. Answers
    of earlier rounds travel sealed in ``requestState``; :attr:`request_state` and
    :meth:`set_request_state` keep a small JSON state of your own across rounds. Keys default
    to ``elicitation_1``, ``sampling_1``, ``roots_1``... in the order of the asks (the core
    numbers them), which is stable as long as the handler asks in the same order on every run;
    pass ``key=`` to name them. In a legacy (2025-11-25) session the same code sends real requests to the client.

    ``progress`` and the log methods act at once; awaiting them is optional. In a plain
    ``def`` handler (run on a worker thread) use ``elicit_sync``, ``sample_sync`` and
    ``list_roots_sync``.
    """

    __slots__ = ("_n", "_loop")

    def __init__(self, native: _native.RequestContext, loop: asyncio.AbstractEventLoop) -> None:
        self._n = native
        self._loop = loop

    # Metadata ---------------------------------------------------------------------------

    @property
    def request_id(self) -> int | str:
        """The JSON-RPC id of the request."""
        return self._n.request_id

    @property
    def method(self) -> str:
        """The method of the request (``tools/call``, ``resources/read``...)."""
        return self._n.method

    @property
    def protocol_version(self) -> str:
        """The protocol version of the request."""
        return self._n.protocol_version

    @property
    def meta(self) -> dict[str, Any]:
        """The request's whole ``_meta`` object."""
        return self._n.meta

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The client's capabilities, as declared for this request."""
        return self._n.client_capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The client's ``clientInfo`` (name, version), when sent."""
        return self._n.client_info

    @property
    def principal(self) -> str | None:
        """The authenticated principal, when the transport established one: with
        :class:`~mcpaxle.BearerAuth`, the access token's subject."""
        return self._n.principal

    @property
    def headers(self) -> dict[str, str]:
        """The request's HTTP headers: lowercase names, a header sent more than once joined with
        ``", "``; empty on stdio."""
        return self._n.headers

    @property
    def claims(self) -> dict[str, Any] | None:
        """The bearer token's claims (what the verifier put in ``TokenInfo.claims``), or
        ``None`` without bearer auth."""
        return self._n.claims

    @property
    def scopes(self) -> list[str] | None:
        """The bearer token's scopes, or ``None`` without bearer auth."""
        return self._n.scopes

    @property
    def progress_token(self) -> str | int | None:
        """The request's progress token, when the client asked for progress."""
        return self._n.progress_token

    @property
    def is_cancelled(self) -> bool:
        """Whether the request was cancelled (a sync handler should poll this)."""
        return self._n.is_cancelled

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared a capability ("sampling", "elicitation", "roots")."""
        return self._n.client_supports(capability)

    async def cancelled(self) -> None:
        """Completes when the request is cancelled."""
        await self._n.cancelled()

    # Tasks -------------------------------------------------------------------------------

    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as (the Tasks extension,
        ``@server.tool(task_support=...)``), or None for an ordinary call. In a task, asks
        become the task's input requests and ``progress`` messages its status message."""
        return self._n.task_id

    async def start_task(self) -> bool:
        """For a tool registered with ``defer_task=True``: answers the call now with its
        task's handle and goes on as that task (asks before this point were answered as in an
        ordinary call). Returns whether the call now runs as a task: False when the client did
        not declare the extension (the call goes on as an ordinary one)."""
        return bool(await self._n.start_task())

    # Progress and logs -------------------------------------------------------------------

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> _Done:
        """Reports progress (``notifications/progress``); a no-op when the client sent no
        progress token. ``progress`` should grow from one call to the next."""
        self._n.progress(float(progress), None if total is None else float(total), message)
        return _DONE

    def close_stream(self, retry: float | datetime.timedelta = 1.0) -> None:
        """Ends this request's response stream now and has the client reconnect after
        ``retry`` seconds (SEP-1699 polling: a long operation need not hold a connection
        open). The handler goes on; what it sends afterwards, its result included, reaches
        the client when it resumes with ``Last-Event-ID``. Only legacy (2025-11-25) HTTP
        sessions have resumable streams; elsewhere this does nothing."""
        seconds = retry.total_seconds() if isinstance(retry, datetime.timedelta) else float(retry)
        if not seconds >= 0:
            raise UsageError(f"close_stream: retry must be a number of seconds >= 0, not {retry!r}")
        self._n.close_stream(int(seconds * 1000))

    def log(self, level: LogLevel, data: Any, *, logger: str | None = None) -> _Done:
        """Sends a log message (``notifications/message``) if the request asked for logs at
        this level (``_meta`` ``io.modelcontextprotocol/logLevel``); nothing otherwise."""
        if self._n.log_enabled(level):
            from ._convert import to_jsonable

            self._n.log(level, to_jsonable(data), logger)
        return _DONE

    def log_enabled(self, level: LogLevel) -> bool:
        """Whether a message at ``level`` would be sent."""
        return self._n.log_enabled(level)

    def debug(self, data: Any, *, logger: str | None = None) -> _Done:
        """``log("debug", ...)``."""
        return self.log("debug", data, logger=logger)

    def info(self, data: Any, *, logger: str | None = None) -> _Done:
        """``log("info", ...)``."""
        return self.log("info", data, logger=logger)

    def warning(self, data: Any, *, logger: str | None = None) -> _Done:
        """``log("warning", ...)``."""
        return self.log("warning", data, logger=logger)

    def error(self, data: Any, *, logger: str | None = None) -> _Done:
        """``log("error", ...)``."""
        return self.log("error", data, logger=logger)

    # MRTR --------------------------------------------------------------------------------

    async def _ask(self, kind: str, key: str | None, params: dict[str, Any] | None) -> Any:
        done, value = self._n.ask(kind, key, params)
        if not done:
            value = await value
        return value

    async def elicit(self, message: str, schema: Any = None, *, key: str | None = None, url: str | None = None) -> ElicitResult:
        """Asks the user for input through the client. ``schema`` is the form: a JSON Schema
        dict, a mapping of field names to types (``{"name": str}``), or a dataclass, TypedDict
        or pydantic model (then ``result.data`` is an instance when accepted). With ``url=``
        asks the user to visit a URL instead (URL mode). See the class docs for the replay
        model."""
        if url is not None:
            params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
            tp = None
        else:
            requested, tp = _elicitation_schema(schema)
            params = {"mode": "form", "message": message, "requestedSchema": requested}
        raw = await self._ask("elicitation", key, params)
        content = raw.get("content")
        result = ElicitResult(action=raw.get("action", "cancel"), content=content)
        if tp is not None and result.accepted and isinstance(content, dict):
            result.data = tp(content)
        return result

    async def sample(
        self,
        messages: Any,
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        include_context: Literal["none", "thisServer", "allServers"] | None = None,
        metadata: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> SampleResult:
        """Asks the client to sample its LLM. ``messages``: a str (one user message), a
        :class:`~mcpaxle.Message`, or a list of them. See the class docs for the replay model."""
        params: dict[str, Any] = {"messages": _messages(messages), "maxTokens": max_tokens}
        for name, v in (
            ("systemPrompt", system_prompt),
            ("temperature", temperature),
            ("stopSequences", stop_sequences),
            ("modelPreferences", model_preferences),
            ("includeContext", include_context),
            ("metadata", metadata),
        ):
            if v is not None:
                params[name] = v
        raw = await self._ask("sampling", key, params)
        return SampleResult(role=raw.get("role", "assistant"), content=raw.get("content"), model=raw.get("model", ""), stop_reason=raw.get("stopReason"), raw=raw)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """Asks the client for its roots. See the class docs for the replay model."""
        raw = await self._ask("roots", key, None)
        return [Root(uri=r["uri"], name=r.get("name")) for r in raw.get("roots", [])]

    def _sync(self, coro: typing.Coroutine[Any, Any, Any]) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            coro.close()
            raise RuntimeError("the *_sync asks are for plain def handlers; in an async def handler, await ctx.elicit(...) and friends")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def elicit_sync(self, message: str, schema: Any = None, *, key: str | None = None, url: str | None = None) -> ElicitResult:
        """:meth:`elicit` for a plain ``def`` handler."""
        return self._sync(self.elicit(message, schema, key=key, url=url))

    def sample_sync(self, messages: Any, **kwargs: Any) -> SampleResult:
        """:meth:`sample` for a plain ``def`` handler."""
        return self._sync(self.sample(messages, **kwargs))

    def list_roots_sync(self, *, key: str | None = None) -> list[Root]:
        """:meth:`list_roots` for a plain ``def`` handler."""
        return self._sync(self.list_roots(key=key))

    @property
    def request_state(self) -> Any:
        """The JSON state saved by an earlier round with :meth:`set_request_state`, or None."""
        return self._n.request_state()

    def set_request_state(self, state: Any) -> None:
        """Saves JSON state for the next round (sealed into ``requestState``)."""
        from ._convert import to_jsonable

        self._n.set_request_state(to_jsonable(state))

    def input_required(self) -> typing.NoReturn:
        """Ends this round now: the client gets the asks made so far and the state set with
        :meth:`set_request_state`, and retries."""
        raise InputRequired()
