"""The core's log events (a connection limit reached, a Redis bus reconnecting, a stdio
server's stderr, an issuer's key set unreachable, ...) in Python's ``logging``.

Each event goes to the logger named after where in the core it comes from, ``::`` turned into
dots: ``mcpaxle.transport.http.server``, ``mcpaxle.client``, ... (all under ``mcpaxle``), at the
level it has (``DEBUG``, ``INFO``, ``WARNING``, ``ERROR``), with the event's other values in the
record's ``mcpaxle_fields`` attribute. Nothing is printed unless the application configures
logging (``logging.basicConfig(level=logging.DEBUG)`` shows them all; a handler on the
``mcpaxle`` logger those alone): an event whose logger has no handler anywhere up its chain is
not logged at all, so Python's last-resort stderr handler never prints them.

They are delivered on one thread of the core's, ``mcpaxle-log``, one at a time: a logging
configuration that blocks holds up only that thread. When more than 1,024 wait, the excess is
dropped and the next record says how many."""

from __future__ import annotations

import logging
from typing import Any

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def _record(level: str, target: str, message: str, fields: dict[str, Any] | None) -> None:
    """Called by the core (``src/log.rs``) for each of its log events."""
    logger = logging.getLogger(target.replace("::", "."))
    number = _LEVELS.get(level, logging.WARNING)
    if logger.isEnabledFor(number) and logger.hasHandlers():
        logger.log(number, "%s", message, extra={"mcpaxle_fields": fields or {}})
