"""Notebook metadata as tags: what a snippet's tag block says, for a notebook's cells.

A notebook says in its metadata what a tag block says for a snippet
(:mod:`snipcheck.sources.tags`), under the key ``snipcheck``::

    notebook metadata  {"snipcheck": {"requires": ["cuda"], "timeout": 30, "seed": 0}}
    cell metadata      {"snipcheck": {"timeout": 120, "expect": "KeyError"}}

The notebook's table applies to every cell of its chain (``seed``: to its
first cell, which seeds the chain's process); a cell's table adds to it, and
its value wins for a key both name (``requires``, ``env`` and ``depends``
are joined: a cell needs what the notebook needs and what it names).
``expect`` and ``refutes`` say what one cell does, so only a cell may name
them.  An unknown key is left out with a message that names it and the known
keys; a bad value is the tag block's own error (:func:`tags.parse`).

The cell's tag table becomes a tag block written after its code, so that the
run numbers the code's lines as the cell shows them.

Pure core: standard library and :mod:`snipcheck.sources.tags`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from snipcheck.sources.tags import KNOWN_KEYS

__all__ = ["CELL_KEYS", "KEY", "NOTEBOOK_KEYS", "cell_table", "known", "tag_block"]

#: The metadata key, in the notebook's and in each cell's metadata.
KEY = "snipcheck"
#: Keys a cell's table may hold: every tag.
CELL_KEYS = tuple(sorted(KNOWN_KEYS))
#: Keys the notebook's table may hold: every tag but what one cell does.
NOTEBOOK_KEYS = tuple(k for k in CELL_KEYS if k not in ("expect", "refutes"))
#: Keys whose lists join (notebook's, then the cell's).
_JOINED = ("requires", "env", "depends")


def known(table: object, keys: tuple[str, ...]) -> tuple[dict[str, Any], list[str]]:
    """The keys of ``table`` that ``keys`` holds, and one sentence per problem
    (a table that is not an object, an unknown key), without where it is.

    :param table: a ``snipcheck`` metadata value as nbformat read it.
    """
    if table is None:
        return {}, []
    if not isinstance(table, Mapping):
        return {}, [
            f"its metadata {KEY!r} is a {type(table).__name__}, not an object of tags; it is left out"
        ]
    kept: dict[str, Any] = {}
    problems = []
    for key, value in table.items():
        if key in keys:
            kept[key] = value
        elif key in KNOWN_KEYS:
            problems.append(
                f"tag {key!r} says what one cell does: give it in that cell's metadata; it is left out"
            )
        else:
            problems.append(
                f"unknown tag {key!r} in its metadata {KEY!r} is left out; known tags are: {', '.join(keys)}"
            )
    return kept, problems


def cell_table(notebook: Mapping[str, Any], cell: Mapping[str, Any], *, first: bool) -> dict[str, Any]:
    """The tags of one cell: the notebook's table with the cell's over it.

    :param notebook: the notebook's known tags (see :func:`known`).
    :param cell: the cell's known tags.
    :param first: whether it is the first cell of the chain (the one a
        notebook's ``seed`` goes to).
    """
    table = {k: v for k, v in notebook.items() if k != "seed" or first}
    for key, value in cell.items():
        if key in _JOINED and key in table:
            table[key] = _listed(table[key]) + [v for v in _listed(value) if v not in _listed(table[key])]
        else:
            table[key] = value
    return table


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def tag_block(table: Mapping[str, Any]) -> str:
    """``table`` as the lines of a Python tag block (``""`` for none).

    :raises ValueError: for a value TOML cannot hold as a tag (an object, ``null``).
    """
    if not table:
        return ""
    lines = ["# /// snipcheck"]
    lines += [f"# {key} = {_toml(key, value)}" for key, value in table.items()]
    return "\n".join([*lines, "# ///"])


def _toml(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)  # inf and nan too: TOML writes them so
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml(key, v) for v in value) + "]"
    raise ValueError(f"bad value for {key!r}: {value!r}; {KNOWN_KEYS[key]}")
