"""A small notes server: the mcpaxle Python API in one file (the port of
core/examples/notes_server.rs; both answer the same requests the same way).

    python notes_server.py --http 127.0.0.1:3000     # endpoint /mcp
    python notes_server.py --stdio

`make demo` builds the package and drives this server end to end over HTTP with
scripts/demo.py, after the Rust one.

What it offers, and what each part shows:

    tool add_note             typed arguments, an outputSchema, a structured result
    tool search_notes         text plus structuredContent
    tool delete_note          MRTR elicitation (the user confirms), tool errors
    tool summarize_notes      MRTR sampling (the client's LLM), with a fallback
    tool export_notes         progress notifications
    resource notes://index    a direct resource
    template note://{id}      an RFC 6570 resource template, "resource not found" errors
    MAX_NOTES, max_length     bounds on what a client may store (count and sizes)
    prompt review_note(id)    a prompt with an embedded resource, argument completion

Adding or deleting a note announces notifications/resources/updated for notes://index and
notifications/resources/list_changed to the subscriptions/listen streams that asked for them.

Every handler here is ``async def``: they all run on the one asyncio loop that serves the
server, so the store needs no lock (a plain ``def`` handler would run on a thread pool).
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from typing import Annotated, Any, TypedDict

from mcpaxle import CacheHint, Context, EmbeddedResource, Field, Server, ToolError, ToolResult, user
from mcpaxle.errors import InvalidParams

INDEX_URI = "notes://index"
NOTE_TEMPLATE = "note://{id}"

# ─── The store ──────────────────────────────────────────────────────────────────────────


@dataclasses.dataclass
class Note:
    id: int
    title: str
    body: str
    tags: list[str]

    @property
    def uri(self) -> str:
        return f"note://{self.id}"

    def markdown(self) -> str:
        md = f"# {self.title}\n\n{self.body}\n"
        if self.tags:
            md += f"\nTags: {', '.join(self.tags)}\n"
        return md


notes: dict[int, Note] = {}
next_id = 0

# Limits. Every client shares this store, so none can grow it without bound: a copied example
# that goes on the internet must not let one caller fill the server's memory.
MAX_NOTES = 1_000  # add_note beyond it is a tool error
MAX_TITLE = 200  # characters (maxLength in add_note's inputSchema)
MAX_BODY = 20_000
MAX_TAGS = 20  # tags of one note, each at most MAX_TAG characters
MAX_TAG = 40

# ─── The server ─────────────────────────────────────────────────────────────────────────

# Caching hints. The lists (tools, prompts, templates, the one direct resource) change only
# with this program: clients may keep them for a minute, and share them. Notes change at any
# time and are the user's own: reads are stale at once, and private.
MINUTE = CacheHint(60_000, "public")

server = Server(
    "notes",
    version="0.1.0",
    title="Notes",
    instructions="A notebook: add, search, summarize, export and delete notes. notes://index lists them; note://{id} reads one.",
    cache={"discover": MINUTE, "tools": MINUTE, "prompts": MINUTE, "resources": MINUTE, "templates": MINUTE, "read": CacheHint(0, "private")},
)


def announce_change(note_id: int) -> None:
    """Announces a change of the note set to subscriptions/listen streams. Adding and removing
    tools, resources and prompts announces itself, but notes live behind the note://{id}
    template, so a change of them is ours to announce."""
    server.notify_resource_updated(INDEX_URI)
    server.notify_resource_updated(f"note://{note_id}")
    server.notify_list_changed("resources")


# ─── Tools ──────────────────────────────────────────────────────────────────────────────
#
# The inputSchema comes from the parameters, the description from the docstring, the
# outputSchema from the return annotation. Arguments are validated against the inputSchema
# before a handler runs; a call that does not match gets an isError result saying why.


class AddedNote(TypedDict):
    id: int
    title: str


class NoteSummary(TypedDict):
    id: int
    title: str
    tags: list[str]


class SearchResult(TypedDict):
    notes: list[NoteSummary]


@server.tool()
async def add_note(
    title: Annotated[str, Field(min_length=1, max_length=MAX_TITLE, description="A short title")],
    body: Annotated[str, Field(max_length=MAX_BODY, description="The text of the note")],
    tags: list[str] | None = None,
) -> AddedNote:
    """Add a note; returns its id"""
    global next_id
    # The inputSchema bounds title and body (the server checks it before this runs); the tags
    # and the count of notes are ours to check.
    if len(tags or []) > MAX_TAGS or any(len(t) > MAX_TAG for t in tags or []):
        raise ToolError(f"A note has at most {MAX_TAGS} tags of at most {MAX_TAG} characters each")
    if len(notes) >= MAX_NOTES:
        raise ToolError(f"The notebook is full ({MAX_NOTES} notes): delete a note with delete_note before adding another")
    next_id += 1
    note = Note(next_id, title, body, tags or [])
    notes[note.id] = note
    announce_change(note.id)
    # A TypedDict result is the structuredContent (its JSON text goes in content too).
    return {"id": note.id, "title": note.title}


@server.tool(annotations={"read_only": True})
async def search_notes(query: Annotated[str, "Text to look for"]) -> SearchResult:
    """Find notes by text in their title, body or tags"""
    q = query.lower()
    hits = [n for n in notes.values() if q in n.title.lower() or q in n.body.lower() or any(q in t.lower() for t in n.tags)]
    names = ", ".join(f"#{n.id} {n.title}" for n in hits)
    found: SearchResult = {"notes": [{"id": n.id, "title": n.title, "tags": n.tags} for n in hits]}
    # ToolResult: a readable line for the model, and the structured list for programs.
    return ToolResult([f"{len(hits)} note(s) match {query!r}: {names}"], structured=found)  # type: ignore[return-value]


@dataclasses.dataclass
class Confirm:
    """The confirmation form of delete_note."""

    confirm: Annotated[bool, Field(title="Delete it")] = False


@server.tool(annotations={"destructive": True})
async def delete_note(id: Annotated[int, Field(ge=1)], ctx: Context) -> str:  # noqa: A002 - the protocol's argument name
    """Delete a note, after the user confirms"""
    note = notes.get(id)
    if note is None:
        # A ToolError becomes an isError result, which the model reads.
        raise ToolError(f"There is no note #{id}")

    # MRTR. On the first call there is no answer yet: `elicit` raises InputRequired (let it
    # propagate) and the client gets an InputRequiredResult. It asks its user, then retries
    # with the answer, and this handler runs again from the top; this time `elicit` returns
    # the answer. So: only reads before an ask, side effects after.
    answer = await ctx.elicit(f"Delete note #{note.id} {note.title!r}? This cannot be undone.", Confirm, key="confirm")
    if not (answer.accepted and answer.data.confirm):
        raise ToolError(f"Kept note #{id}: the user did not confirm")

    if notes.pop(id, None) is None:
        raise ToolError(f"Note #{id} was already deleted")
    announce_change(id)
    return f"Deleted note #{id} ({note.title!r})"


@server.tool(annotations={"read_only": True})
async def summarize_notes(ctx: Context) -> str:
    """Summarize the notes (with the client's LLM when it can sample)"""
    if not notes:
        return "There are no notes yet."
    # Ask only for what the client declared (an ask it did not declare fails with -32021).
    # Capabilities come with every request in 2026-07-28, so check per call.
    if not ctx.client_supports("sampling"):
        return f"{len(notes)} note(s): " + "; ".join(f"#{n.id} {n.title}" for n in notes.values())
    text = "\n---\n".join(n.markdown() for n in notes.values())
    answer = await ctx.sample(
        f"Summarize these notes:\n\n{text}",
        system_prompt="You summarize a person's notes in at most two sentences.",
        max_tokens=200,
        key="summary",
    )
    return f"{answer.text or '(no text)'}\n(summarized by {answer.model or 'the model'})"


@server.tool(annotations={"read_only": True})
async def export_notes(ctx: Context) -> str:
    """Export every note as Markdown (slow; reports progress)"""
    exported = list(notes.values())
    total = len(exported)
    doc = f"# Notes export ({total} notes)\n"
    # `progress` sends nothing unless the request carried a progress token.
    await ctx.progress(0, total, "Starting the export")
    for i, note in enumerate(exported, 1):
        # Stands for real work. If the client goes away (HTTP disconnect, cancellation) this
        # task is cancelled: the sleep raises asyncio.CancelledError.
        await asyncio.sleep(0.2)
        doc += "\n" + note.markdown()
        await ctx.progress(i, total, f"Exported note #{note.id}")
    return doc


# ─── Resources, prompt, completion ──────────────────────────────────────────────────────


@server.resource(INDEX_URI, name="index", title="All notes", description="Id, title, tags and URI of every note", mime_type="application/json")
async def read_index() -> dict[str, Any]:
    # A dict is sent as JSON text.
    listed = [{"id": n.id, "title": n.title, "tags": n.tags, "uri": n.uri} for n in notes.values()]
    return {"count": len(listed), "notes": listed}


@server.resource(NOTE_TEMPLATE, name="note", title="One note", description="A note as Markdown, by id", mime_type="text/markdown")
async def read_note(id: str, uri: str) -> str:  # noqa: A002 - the template's variable
    # `id` is what the template matched in the URI; `uri` is the URI read. The server has
    # already refused values that could climb out of a directory (`..`, `%2F`, `\`, an absolute
    # path, NUL); still, treat a variable as untrusted input: parse it into what it must be
    # (here a number) rather than pasting it into a file path.
    note = notes.get(int(id)) if id.isdigit() else None
    if note is None:
        # The spec's "resource not found": -32602, with the URI in `data`.
        raise InvalidParams(f"Resource not found: {uri} (no such note)", data={"uri": uri})
    return note.markdown()


@server.prompt(title="Review a note", description="Ask the model to review one note")
async def review_note(id: Annotated[str, "The note's id"]) -> dict[str, Any]:  # noqa: A002 - the prompt's argument
    # Prompt arguments are strings; the server checked that the required `id` is there.
    note = notes.get(int(id)) if id.isdigit() else None
    if note is None:
        raise InvalidParams(f"Invalid params: there is no note with id {id!r}")
    return {
        "description": f"Review of note #{note.id}",
        "messages": [
            user(EmbeddedResource(note.uri, note.markdown(), mime_type="text/markdown")),
            user("Review the note above: is it clear and complete, and are its tags useful? Suggest concrete edits."),
        ],
    }


@server.completion(prompt="review_note")
@server.completion(resource=NOTE_TEMPLATE)
async def complete_id(argument: str, value: str) -> list[str]:
    """Completes a note id, by prefix, from the ids that exist."""
    return [str(i) for i in notes if str(i).startswith(value)]


def main(argv: list[str]) -> None:
    if argv == ["--stdio"]:
        server.run("stdio")
    elif len(argv) == 2 and argv[0] == "--http" and argv[1].rpartition(":")[2].isdigit():
        host, _, port = argv[1].rpartition(":")
        print(f"notes_server: listening on http://{host}:{port}/mcp", file=sys.stderr, flush=True)
        # Serves until Ctrl-C or SIGTERM, then ends open listen streams gracefully.
        server.run("http", host=host, port=int(port))
    else:
        print("usage: notes_server.py --http HOST:PORT | --stdio      (e.g. --http 127.0.0.1:3000)", file=sys.stderr)
        raise SystemExit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
