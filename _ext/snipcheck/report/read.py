"""Reading a verify report file, with one clear line for whatever is wrong with it.

``merge``, ``accept --report``, ``review --report`` and the versions page read
the JSON that ``snipcheck verify --json`` writes (schema ``snipcheck-verify/3``,
documented in ``schemas/verify-report-3.schema.json``; ``snipcheck-verify/2``
and ``/1`` are still read).  :func:`read` checks every key that
:meth:`snipcheck.report.verify.Report.from_json` needs, and its type, before building
the report, so a damaged or foreign file is refused with a message that names
the file, the key (as a path: ``shard.index``, ``snippets[3].status``), what
was found, and which schema the file says it has, never a bare ``KeyError``.

Keys the report computes from its snippets (``counts``, ``holds``) are not
read; keys added to the format later (``total``, ``fingerprint``, a snippet's
``problems`` ...) may be missing from an older report.

Pure core: standard library and :mod:`snipcheck.report.verify`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from snipcheck.report.verify import OLD_SCHEMAS, SCHEMA, STATUSES, Report

#: What writes each known schema that is not a verify report.
_OTHER_FILES = {
    "snipcheck-build/1": "the build's report.json (written by sphinx-build)",
    "snipcheck-review/1": "a review's state file (written by snipcheck review)",
}


class ReportError(ValueError):
    """A file that is not a verify report this snipcheck can read; ``str()`` is one line naming the file."""


# A check takes the value and returns what is wrong with it ("" when nothing).
Check = Callable[[Any], str]


def _type(*kinds: type | None) -> Check:
    names: dict[type | None, str] = {
        str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list", dict: "an object",
        None: "null",
    }  # fmt: skip

    def check(value: Any) -> str:
        for kind in kinds:
            if kind is None and value is None:
                return ""
            if kind is int and isinstance(value, int) and not isinstance(value, bool):
                return ""
            if kind is not None and kind is not int and isinstance(value, kind):
                return ""
        return "not " + " or ".join(names[k] for k in kinds)

    return check


def _strings(value: Any) -> str:
    if not isinstance(value, list):
        return "not a list of strings"
    return "" if all(isinstance(v, str) for v in value) else "not a list of strings (an item is not a string)"


def _positive(value: Any) -> str:
    why = _type(int)(value)
    return why or ("" if value >= 1 else "not 1 or more")


def _count(value: Any) -> str:
    why = _type(int)(value)
    return why or ("" if value >= 0 else "a negative number")


def _one_of(*allowed: str) -> Check:
    def check(value: Any) -> str:
        return "" if value in allowed else "not one of " + ", ".join(allowed)

    return check


_STRING, _OPTIONAL_STRING = _type(str), _type(str, None)
#: key → (required, check), for each object of the format.
_STAMP: dict[str, tuple[bool, Check]] = {
    "python": (True, _STRING), "torch": (True, _OPTIONAL_STRING), "device": (True, _STRING),
    "platform": (True, _STRING), "rustc": (False, _OPTIONAL_STRING), "env": (False, _OPTIONAL_STRING),
}  # fmt: skip
_SHARD: dict[str, tuple[bool, Check]] = {"index": (True, _positive), "count": (True, _positive)}
_SNIPPET: dict[str, tuple[bool, Check]] = {
    "id": (True, _STRING), "doc": (True, _STRING), "line": (True, _positive), "status": (True, _one_of(*STATUSES)),
    "problems": (False, _strings), "diff": (False, _STRING), "stated": (False, _STRING),
    "actual": (False, _OPTIONAL_STRING), "missing": (False, _strings), "env_wide_only": (False, _type(bool)),
    "masked": (False, _strings), "masked_diff": (False, _STRING),
    # written only to the terminal and HTML forms, but a report may hold them
    "duration": (False, _type(int, float)), "origin": (False, _STRING),
}  # fmt: skip
_CHANGE: dict[str, tuple[bool, Check]] = {
    "sign": (True, _one_of("+", "-")), "text": (True, _STRING), "snippets": (True, _strings),
}  # fmt: skip
_TOP: dict[str, tuple[bool, Check]] = {
    "schema": (True, _STRING), "stamp": (True, _type(dict)), "reference": (True, _STRING), "shard": (True, _type(dict)),
    "snippets": (True, _type(list)), "environment_wide": (True, _type(list)), "total": (False, _count),
    "fingerprint": (False, _STRING), "counts": (False, _type(dict)), "holds": (False, _type(bool)),
}  # fmt: skip


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:40] + "…"


def _problem(data: Mapping[str, Any], spec: Mapping[str, tuple[bool, Check]], where: str) -> str:
    """What is wrong with object ``data`` at path ``where`` (``""``: nothing)."""
    for key, (required, check) in spec.items():
        name = f"{where}.{key}" if where else key
        if key not in data:
            if required:
                return f"key {name!r} is missing"
            continue
        why = check(data[key])
        if why:
            return f"key {name!r} holds {_shown(data[key])}, {why}"
    unknown = sorted(set(data) - set(spec))
    if unknown:
        return f"key {(where + '.' if where else '') + unknown[0]!r} is not part of the format"
    return ""


def check(data: Any) -> str:
    """What is wrong with ``data`` (a parsed JSON file) as a verify report, or ``""``.

    The message is one clause (no file name): ``key 'stamp' is missing``,
    ``it holds a JSON list, not an object``...
    """
    if not isinstance(data, dict):
        kind = {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(data), "number")
        return f"it holds a JSON {kind}, where a report holds an object"
    why = _problem(data, _TOP, "")
    if why:
        return why
    for name, value, spec in (("stamp", data["stamp"], _STAMP), ("shard", data["shard"], _SHARD)):
        why = _problem(value, spec, name)
        if why:
            return why
    if data["shard"]["index"] > data["shard"]["count"]:
        return f"key 'shard' says shard {data['shard']['index']} of {data['shard']['count']}"
    for key, spec in (("snippets", _SNIPPET), ("environment_wide", _CHANGE)):
        for n, item in enumerate(data[key]):
            where = f"{key}[{n}]"
            why = f"key {where!r} holds {_shown(item)}, not an object" if not isinstance(item, dict) else _problem(item, spec, where)
            if why:
                return why
    return ""


def parse(data: Any, name: str) -> Report:
    """The report in ``data`` (a parsed JSON file).

    :param name: the file, as the message shows it.
    :raises ReportError: naming ``name``, the key at fault and the file's schema.
    """
    schema = data.get("schema") if isinstance(data, dict) else None
    if not isinstance(data, dict) or "schema" not in data:
        why = check(data) if not isinstance(data, dict) else "it has no 'schema' key"
        raise ReportError(
            f"{name}: not a snipcheck verify report: {why} (a verify report is the JSON object "
            f"`snipcheck verify --json FILE` writes, with \"schema\": \"{SCHEMA}\")"
        )
    if schema in _OTHER_FILES:
        raise ReportError(
            f"{name}: not a verify report but {_OTHER_FILES[schema]} (schema {schema}); "
            "give the file `snipcheck verify --json FILE` writes"
        )
    if schema not in (SCHEMA, *OLD_SCHEMAS):
        known = ", ".join((SCHEMA, *OLD_SCHEMAS)[:-1]) + " and " + OLD_SCHEMAS[-1]
        raise ReportError(
            f"{name}: a report of schema {_shown(schema)}, which this snipcheck cannot read (it reads {known}); "
            "verify again with this snipcheck, or use the snipcheck that wrote it"
        )
    why = check(data)
    if why:
        kind = "complete" if why.endswith(" is missing") else "valid"
        raise ReportError(f"{name}: not a {kind} snipcheck verify report: {why} (schema {schema}; was it written by `snipcheck verify`?)")
    return Report.from_json(data)


def read(path: Path) -> Report:
    """Read the verify report at ``path``.

    :raises ReportError: one line naming ``path``: it cannot be read, is
        empty, is not JSON, or is not a verify report (see :func:`parse`).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ReportError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if not raw.strip():
        raise ReportError(
            f"{path}: the file is empty, so not a verify report (`snipcheck verify --json FILE` writes one)"
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ReportError(f"{path}: not a verify report: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except ValueError as exc:
        raise ReportError(f"{path}: not JSON ({exc}), so not a verify report; write it again with `snipcheck verify --json`") from None
    return parse(data, str(path))
