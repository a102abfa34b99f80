"""What a jupytext script says about itself: its YAML header and its cells' metadata.

jupytext writes a notebook's metadata as a commented YAML header at the top
of the script (``# ---`` … ``# ---``, the kernel, the language, the jupytext
version and the text format under ``jupyter:``); a cell's metadata follows
its marker as ``key=value`` pairs with JSON values
(``# %% tags=["raises-exception"]``).  This module reads both: the header
is metadata, never a cell, and never shown.

The header is read with a small reader of the YAML subset jupytext writes
(nested mappings by indentation, plain or quoted scalars, ``[a, b]`` flow
lists): the core depends on no YAML library, and what the header holds is
only read, never written back.

Pure core: standard library only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["Header", "cell_options", "read_header"]

_HEADER = re.compile(r"^---\s*$")
_COMMENTED = re.compile(r"^# ?(?P<text>.*)$")
_KEY = re.compile(r"^(?P<indent>\s*)(?P<key>[^:#\s][^:]*?)\s*:(?:\s+(?P<value>.*?))?\s*$")


@dataclass(frozen=True)
class Header:
    """A jupytext header.

    :param end: index (0-based) of the first script line after it (and after
        one blank line that follows it, as jupytext skips it).
    :param metadata: the header as nested dicts of strings.
    :param line: 1-based line of its first ``# ---``.
    """

    end: int
    metadata: dict[str, object]
    line: int

    def get(self, *path: str) -> str:
        """The scalar at ``path`` (``"jupyter", "kernelspec", "language"``), ``""`` if absent."""
        node: object = self.metadata
        for key in path:
            if not isinstance(node, dict):
                return ""
            node = node.get(key)
        return node if isinstance(node, str) else ""

    @property
    def format_name(self) -> str:
        """``"percent"``, ``"light"`` or ``""``: the text format jupytext says it wrote."""
        return self.get("jupyter", "jupytext", "text_representation", "format_name")

    @property
    def language(self) -> str:
        """The kernel's language (``"python"``), or ``""`` when not said."""
        said = self.get("jupyter", "kernelspec", "language")
        if said:
            return said
        return "python" if self.get("jupyter", "jupytext", "text_representation", "extension") == ".py" else ""


def read_header(lines: list[str]) -> Header | None:
    """The jupytext header at the top of ``lines`` (a shebang and a coding
    line may come first), or ``None``."""
    start = 0
    while start < min(2, len(lines)) and (lines[start].startswith("#!") or "coding" in lines[start]):
        if not lines[start].startswith("#!") and not re.match(r"^#.*coding[:=]", lines[start]):
            break
        start += 1
    if start >= len(lines) or not _is(lines[start], _HEADER):
        return None
    body: list[str] = []
    for i in range(start + 1, len(lines)):
        m = _COMMENTED.match(lines[i])
        if m is None:
            return None
        if _HEADER.match(m.group("text")):
            end = i + 1
            if end < len(lines) and not lines[end].strip():
                end += 1
            return Header(end, _mapping(body), start + 1)
        body.append(m.group("text"))
    return None


def _is(line: str, pattern: re.Pattern[str]) -> bool:
    m = _COMMENTED.match(line)
    return m is not None and bool(pattern.match(m.group("text")))


def _mapping(lines: list[str]) -> dict[str, object]:
    """Nested mappings from indented ``key: value`` lines (others ignored)."""
    root: dict[str, object] = {}
    stack: list[tuple[int, dict[str, object]]] = [(-1, root)]
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _KEY.match(line)
        if m is None:
            continue
        indent = len(m.group("indent"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else root
        key, value = m.group("key").strip().strip("'\""), m.group("value")
        if value:
            parent[key] = _scalar(value)
        else:
            child: dict[str, object] = {}
            parent[key] = child
            stack.append((indent, child))
    return root


def _scalar(text: str) -> object:
    text = text.strip()
    if text[:1] in "'\"" and text[-1:] == text[:1] and len(text) >= 2:
        return text[1:-1]
    if text.startswith("[") and text.endswith("]"):
        return [str(_scalar(part)) for part in text[1:-1].split(",") if part.strip()]
    return text


_OPTION_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def cell_options(text: str) -> tuple[str, dict[str, object]]:
    """A percent marker's options: its title and its metadata.

    ``text`` is what follows ``# %%`` and the cell kind:
    ``Title tags=["a", "b"] id="x" active="py"``.  Values are JSON, or one
    word; a bare key has the value ``None`` (as jupytext reads them).

    :raises ValueError: for a value that is neither JSON nor one word.
    """
    metadata: dict[str, object] = {}
    words: list[str] = []
    i, n = 0, len(text)
    decoder = json.JSONDecoder()
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        m = _OPTION_KEY.match(text, i)
        if m is not None and m.end() < n and text[m.end()] == "=":
            at = m.end() + 1
            quoted = re.match(r"'([^']*)'", text[at:])
            try:
                if quoted is not None:
                    value, end = quoted.group(1), at + quoted.end()
                else:
                    value, end = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                word = re.match(r"[^\s]*", text[at:])
                assert word is not None
                value, end = word.group(0), at + word.end()
                if not value or value[0] in "[{\"'":
                    raise ValueError(f"the value of {m.group(0)!r} is not JSON: {text[at:]!r}") from None
            metadata[m.group(0)] = value
            i = end
            continue
        word = re.match(r"\S+", text[i:])
        assert word is not None
        words.append(word.group(0))
        i += word.end()
    if words and all(_OPTION_KEY.fullmatch(w) for w in words) and metadata:
        for w in words:  # bare keys among key=value pairs
            metadata.setdefault(w, None)
        words = []
    return " ".join(words), metadata
