"""The table shared with the core, Node and C (tests/auth_option_cases.json): invalid bearer-auth
and OAuth options, bad token verifier answers, and what the core says of each."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

AUTH_CASES: dict[str, Any] = json.loads((Path(__file__).parents[2] / "tests" / "auth_option_cases.json").read_text())


def snake(name: str) -> str:
    """The Python name of a JSON option name (``requiredScopes`` -> ``required_scopes``)."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def kwargs(area: str, case: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of a case of ``area``: its valid options with the case's applied,
    by their Python names (a null is ``None``: absent)."""
    options = {**AUTH_CASES[area]["valid"], **case["set"]}
    return {snake(k): v for k, v in options.items()}


def expected(case: dict[str, Any]) -> str:
    """What the error must say: ``<path>: <message>``, the path's first name in Python's spelling."""
    path = re.sub(r"^[A-Za-z]+", lambda m: snake(m.group(0)), case["path"])
    return f"{path}: {case['message']}" if path else case["message"]
