"""Duration options: every one is in milliseconds and named ``*_ms`` (the core's unit in every
binding); a ``datetime.timedelta`` is accepted for any of them."""

from __future__ import annotations

import datetime
from typing import Any, Mapping

from .errors import UsageError


def ms(v: int | datetime.timedelta | None) -> int | None:
    """A duration option: milliseconds as they are, a ``timedelta`` in milliseconds."""
    if isinstance(v, datetime.timedelta):
        return int(v / datetime.timedelta(milliseconds=1))
    return v


def ms_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with each ``*_ms`` value that is a ``timedelta`` in milliseconds and the
    ``None`` values left out (the core's defaults)."""
    return {k: (ms(v) if k.endswith("_ms") else v) for k, v in options.items() if v is not None}


def positive_ms(v: int | datetime.timedelta | None, what: str) -> int | None:
    """A timeout in milliseconds (or a timedelta), at least 1 ms."""
    out = ms(v)
    if out is not None and out <= 0:
        raise UsageError(f"{what} must be a positive number of milliseconds (or None for no limit), not {v!r}")
    return out
