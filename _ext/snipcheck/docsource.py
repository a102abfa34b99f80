"""Find snippet directives in MyST Markdown sources and rewrite their bodies.

The chapter source states each snippet's output as the body of a fenced
directive::

    ```{snippet} inplace/leaf-add
    :stated-env: torch 2.15.0+cu128 · Python 3.12.3 · CUDA (NVIDIA H200)

    a.add_(1): same storage? True
    ```

:func:`scan` reads those without Sphinx, splitting the body exactly as
myst-parser does (an option block of ``:key: value`` lines or a ``---`` YAML
block, then one blank line dropped), so the command line (record, verify,
accept) and the Sphinx build see the same stated output.  :func:`rewrite`
replaces bodies and leaves every other byte of the file as it was; it writes
the file atomically.

Pure core: standard library and :mod:`snipcheck.cache` (atomic writes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .cache import write_atomic

#: Directives whose argument is a snippet id and whose body is its stated output.
DIRECTIVES = frozenset({"snippet", "refuted-claim"})
#: Directives whose body is literal text, never markup: a snippet directive
#: shown inside one of them is an example, not a placement.
LITERAL = frozenset(
    {"code-block", "code", "sourcecode", "code-cell", "literalinclude", "raw", "math", "mermaid",
     "graphviz", "csv-table", "eval-rst", "parsed-literal", "highlight", "snipcheck-versions"}
)
_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>.*?)[ \t]*$")


class UnwritableBody(ValueError):
    """A stated output that Markdown cannot hold where the directive sits
    (a line that would close an enclosing fence); the message says what to do."""


@dataclass(frozen=True)
class Placement:
    """One snippet directive in a source file.

    :param path: the source file.
    :param line: 1-based line of the opening fence.
    :param snippet_id: the directive argument.
    :param options: option name → value, in source order.
    :param body: the stated output (lines joined with ``\\n``).
    :param fence: the fence characters, e.g. ````` ``` `````.
    :param indent: indentation of the opening fence.
    :param body_start: 0-based index of the first body line in the file.
    :param body_end: 0-based index of the closing fence line (exclusive end
        of the body).
    :param has_options: whether an option block is present.
    :param enclosing: fences of the fenced directives around it (outermost
        first), e.g. ``("````",)`` inside a backtick-fenced ``{tab-item}``.
    """

    path: Path
    line: int
    snippet_id: str
    options: tuple[tuple[str, str], ...]
    body: str
    fence: str
    indent: str
    body_start: int
    body_end: int
    has_options: bool
    enclosing: tuple[str, ...] = ()

    @property
    def body_line(self) -> int:
        """1-based line of the first body line (for diffs and messages)."""
        return self.body_start + 1

    def option(self, name: str) -> str | None:
        return dict(self.options).get(name)


def scan_text(text: str, path: Path) -> list[Placement]:
    """All snippet directives in ``text`` (the contents of ``path``)."""
    lines = text.split("\n")
    found: list[Placement] = []
    _scan_range(lines, 0, len(lines), path, found, ())
    return found


def _scan_range(
    lines: list[str], i: int, stop: int, path: Path, found: list[Placement], enclosing: tuple[str, ...]
) -> None:
    while i < stop:
        m = _OPEN.match(lines[i])
        if not m:
            plain = re.match(r"^([ \t]*)(`{3,}|~{3,})", lines[i])
            if plain:  # any other fenced block: skip it whole
                i = _closing(lines, i + 1, plain.group(2), stop, plain.group(1)) + 1
            else:
                i += 1
            continue
        indent, fence = m.group("indent"), m.group("fence")
        end = _closing(lines, i + 1, fence, stop, indent)
        if m.group("name") not in DIRECTIVES:
            if m.group("name") not in LITERAL:
                # a directive such as {tab-item} may hold snippets in longer fences
                _scan_range(lines, i + 1, end, path, found, (*enclosing, fence))
            i = end + 1
            continue
        content = [_dedent(line, indent) for line in lines[i + 1 : end]]
        opts, body_offset, has_opts = _split_options(content)
        found.append(
            Placement(
                path=path,
                line=i + 1,
                snippet_id=m.group("arg").strip(),
                options=opts,
                body=_body(content, body_offset, has_opts),
                fence=fence,
                indent=indent,
                body_start=i + 1 + body_offset,
                body_end=end,
                has_options=has_opts,
                enclosing=enclosing,
            )
        )
        i = end + 1


def scan(path: Path) -> list[Placement]:
    """:func:`scan_text` on a file (UTF-8)."""
    return scan_text(path.read_text(encoding="utf-8"), path)


def scan_tree(source_dir: Path, suffixes: tuple[str, ...] = (".md",)) -> list[Placement]:
    """Every placement under ``source_dir``, ordered by file and line."""
    out: list[Placement] = []
    for path in sorted(p for p in source_dir.rglob("*") if p.suffix in suffixes and p.is_file()):
        if any(part.startswith(("_", ".")) for part in path.relative_to(source_dir).parts[:-1]):
            continue
        out.extend(scan(path))
    return out


def _closing(lines: list[str], start: int, fence: str, stop: int, indent: str = "") -> int:
    """Index of the line closing ``fence`` (CommonMark: the same character, at
    least as long, indented at most three spaces), or ``stop``."""
    char = fence[0]
    pattern = re.compile(rf"^{re.escape(indent)} {{0,3}}{re.escape(char)}{{{len(fence)},}}[ \t]*$")
    for j in range(start, stop):
        if pattern.match(lines[j]):
            return j
    return stop


def _dedent(line: str, indent: str) -> str:
    return line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t")


def _is_option_line(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith(":") and not stripped.startswith(":::")


def _split_options(content: list[str]) -> tuple[tuple[tuple[str, str], ...], int, bool]:
    """Split a directive's content lines as myst-parser does.

    :return: ``(options, index of the first body line, has_options)``; the
        body is ``content[index:]`` with trailing lines removed as myst-parser
        removes them (see :func:`_body`).
    """
    opts: list[tuple[str, str]] = []
    offset = 0
    has = False
    text = "\n".join(content)
    if text.startswith("---"):
        has = True
        for j in range(1, len(content)):
            if content[j].startswith("---"):
                for raw in content[1:j]:
                    if ":" in raw:
                        key, _, value = raw.partition(":")
                        opts.append((key.strip(), value.strip()))
                offset = j + 1
                break
        else:
            offset = len(content)
    elif text.lstrip().startswith(":"):
        has = True
        while offset < len(content) and _is_option_line(content[offset]):
            key, _, value = content[offset].lstrip()[1:].partition(":")
            opts.append((key.strip(), value.strip()))
            offset += 1
    if offset < len(content) and not content[offset].strip():
        offset += 1  # myst-parser drops one blank line before the body
    return tuple(opts), offset, has


def _body(content: list[str], offset: int, has_options: bool) -> str:
    """The body myst-parser hands the directive.

    Without options it splits the fence's content (which ends in a newline),
    so trailing blank lines survive; with options it splits the lines after
    the options joined *without* a final newline, which loses one trailing
    blank line.
    """
    rest = content[offset:]
    if has_options:
        return "\n".join("\n".join(rest).splitlines())
    return "\n".join(("\n".join(rest) + "\n").splitlines()) if rest else ""


def needs_guard(body: str) -> bool:
    """Whether a body would be misread as options or lose a blank first line
    unless an option block (or an empty ``---`` block) precedes it."""
    first = body.split("\n", 1)[0]
    return body.lstrip().startswith(":") or body.startswith("---") or (body != "" and not first.strip())


def _fence_for(body: str, fence: str) -> str:
    """A fence that no line of ``body`` can close: ``fence`` itself if possible,
    else one of the other character (a longer fence of the same character could
    close an enclosing backtick-fenced ``{tab-item}``)."""

    def longest(char: str) -> int:
        runs = re.findall(rf"^ {{0,3}}({re.escape(char)}{{3,}})", body, re.MULTILINE)
        return max((len(r) for r in runs), default=0)

    if longest(fence[0]) < len(fence):
        return fence
    other = "~" if fence[0] == "`" else "`"
    return other * max(3, longest(other) + 1)


def rewrite_text(text: str, edits: Mapping[int, tuple[str, dict[str, str]]], path: Path) -> str:
    """Replace stated outputs in ``text``.

    :param edits: opening-fence line (1-based) → ``(new body, options to set)``;
        options to set are added or replaced, others kept as written.
    :raises KeyError: if an edit names a line with no snippet directive.
    :raises UnwritableBody: if a body cannot be written where its directive sits.
    :return: the new text; lines outside the edited directives are unchanged,
        and myst-parser reads each new body back exactly (see :func:`scan_text`).
    """
    lines = text.split("\n")
    by_line = {p.line: p for p in scan_text(text, path)}
    for line in sorted(edits, reverse=True):  # bottom-up keeps earlier indices valid
        if line not in by_line:
            raise KeyError(f"{path}:{line}: no snippet directive opens on this line")
        p = by_line[line]
        body, set_options = edits[line]
        options = dict(p.options)
        changed_options = any(options.get(k) != v for k, v in set_options.items())
        options.update(set_options)
        if changed_options or (not p.has_options and (options or needs_guard(body))):
            head = [f":{k}: {v}" if v else f":{k}:" for k, v in options.items()] or ["---", "---"]
            head.append("")
            has_options = True
        else:
            head = [_dedent(x, p.indent) for x in lines[p.line : p.body_start]]
            if p.has_options and (not head or head[-1].strip()):
                head.append("")
            has_options = p.has_options
        new_body = body.split("\n") if body != "" else []
        if has_options and new_body and not new_body[-1].strip():
            new_body.append("")  # myst-parser drops one trailing blank line after options
        fence = _fence_for(body, p.fence)
        for outer in p.enclosing:
            if re.search(rf"^ {{0,3}}{re.escape(outer[0])}{{{len(outer)},}}[ \t]*$", body, re.MULTILINE):
                raise UnwritableBody(
                    f"{path}:{p.line}: the output of {p.snippet_id} has a line of {len(outer)} or more "
                    f"{outer[0]!r} characters, which would close the enclosing {outer}-fenced directive; "
                    "fence that directive with colons (:::) or longer fences"
                )
        opening = lines[p.line - 1]
        closing = lines[p.body_end] if p.body_end < len(lines) else p.indent + fence
        if fence != p.fence:
            opening = p.indent + fence + opening[len(p.indent) + len(p.fence) :]
            closing = p.indent + fence
        block = [p.indent + x if x else x for x in head + new_body]
        lines[p.line - 1 : p.body_end + 1] = [opening, *block, closing]
    return "\n".join(lines)


def rewrite_bytes(raw: bytes, edits: Mapping[int, tuple[str, dict[str, str]]], path: Path) -> bytes:
    """:func:`rewrite_text` on a file's bytes, keeping its line endings (CRLF stays CRLF).

    :raises KeyError, UnwritableBody: see :func:`rewrite_text`.
    """
    text = raw.decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    old = text.replace("\r\n", "\n")
    new = rewrite_text(old, edits, path)
    return raw if new == old else new.replace("\n", newline).encode("utf-8")


def rewrite(path: Path, edits: Mapping[int, tuple[str, dict[str, str]]]) -> bool:
    """Apply :func:`rewrite_text` to a file, atomically.

    :return: whether the file changed (it is not written otherwise).
    :raises KeyError: see :func:`rewrite_text`.
    """
    raw = path.read_bytes()
    new = rewrite_bytes(raw, edits, path)
    if new == raw:
        return False
    write_atomic(path, new)
    return True
