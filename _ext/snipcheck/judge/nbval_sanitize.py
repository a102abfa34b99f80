"""nbval's sanitizer files, read as compare-only normalizers.

``pytest --nbval --sanitize-with sanitize.cfg`` reads a file of regular
expression replacements that nbval applies to both the stored and the fresh
output before comparing them.  Its layout, as nbval reads it::

    [Dates and times]
    regex: \\d\\d\\d\\d-\\d\\d-\\d\\d
    replace: DATESTAMP

    [Memory addresses]
    regex: (<[a-zA-Z_][0-9a-zA-Z_.]* at )(0x[0-9a-fA-F]+)(>)
    replace: \\1MEMORY_ADDRESS\\3

A pair is a line ``regex: <pattern>`` followed at once by a line
``replace: <replacement>`` (each value is the rest of its line after the
one space); the pairs apply in the order of the file, with :func:`re.sub`,
so a replacement may name groups (``\\1``).  A ``[section]`` line only names
the pairs after it.  nbval passes over every other line without a word;
snipcheck reads the same pairs, and says which lines it could not read.

Each section becomes one compare-only :class:`~snipcheck.judge.normalize.Normalizer`
named ``<file> [<section>]`` (it applies when comparing, never to what the
page shows).  Its mask is the same rewrite, so a verify report holds the
replacement text, the same on every run.

Pure core: standard library and :mod:`snipcheck.judge.normalize`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from snipcheck.judge.normalize import Normalizer

__all__ = ["Sanitizers", "load", "read"]

_SECTION = re.compile(r"^\[(.*)\]\s*$")
_REGEX = "regex: "
_REPLACE = "replace: "
#: Lines nbval passes over (comments, as in an INI file).
_COMMENT = ("#", ";")


@dataclass(frozen=True)
class Sanitizers:
    """What the sanitizer files give.

    :param normalizers: one compare-only normalizer per section that holds a
        readable pair, in file order.
    :param problems: one message per file, section or line that could not be
        read, naming the file, the section and what to do.
    """

    normalizers: tuple[Normalizer, ...]
    problems: tuple[str, ...]


def _rewrite(pairs: Sequence[tuple[re.Pattern[str], str]]) -> Callable[[str], str]:
    def apply(text: str) -> str:
        for pattern, replacement in pairs:
            text = pattern.sub(replacement, text)
        return text

    return apply


def read(text: str, shown: str) -> Sanitizers:
    """The normalizers of one sanitizer file's text.

    :param shown: the file's name as messages give it.
    """
    sections: dict[str, list[tuple[re.Pattern[str], str]]] = {}
    problems: list[str] = []
    section = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        where = f"{shown}, line {i}" + (f", section [{section}]" if section else "")
        m = _SECTION.match(line)
        if m:
            section = m.group(1).strip()
            continue
        if not line.strip() or line.lstrip().startswith(_COMMENT):
            continue
        if not line.startswith(_REGEX):
            problems.append(
                f"nbval sanitizer file {where}: {line.strip()[:60]!r} is not read; nbval reads only pairs of lines "
                f"'regex: <pattern>' and 'replace: <replacement>' (one space after the colon)"
            )
            continue
        if i >= len(lines) or not lines[i].startswith(_REPLACE):
            problems.append(
                f"nbval sanitizer file {where}: 'regex:' without a 'replace:' line right after it; "
                "add one (nbval ignores such a regex)"
            )
            continue
        source, replacement = line[len(_REGEX) :], lines[i][len(_REPLACE) :]
        i += 1
        try:
            pattern = re.compile(source)
            pattern.sub(replacement, "")  # parses the replacement: a group it names must be the pattern's
        except (re.error, IndexError) as exc:
            problems.append(f"nbval sanitizer file {where}: bad regex {source!r} or replacement {replacement!r}: {exc}; "
                            "this pair is left out")  # fmt: skip
            continue
        sections.setdefault(section, []).append((pattern, replacement))
    normalizers = []
    for name, pairs in sections.items():
        rewrite = _rewrite(pairs)
        label = f"{shown} [{name}]" if name else shown
        doc = f"nbval sanitizer file {label}: {len(pairs)} regex replacement{'s' if len(pairs) != 1 else ''}"
        normalizers.append(Normalizer(label, rewrite, display=False, doc=doc, mask=rewrite))
    return Sanitizers(tuple(normalizers), tuple(problems))


def load(names: Sequence[str], root: Path) -> Sanitizers:
    """Read the sanitizer files ``names`` (relative to ``root``, the folder of
    ``conf.py``), in order.  A file that cannot be read gives a problem and
    no normalizer; the others are read all the same."""
    normalizers: list[Normalizer] = []
    problems: list[str] = []
    for name in names:
        path = Path(root) / name
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = "no such file" if isinstance(exc, FileNotFoundError) else str(exc)
            problems.append(f"nbval sanitizer file {name}: cannot be read ({why}); give its path relative to conf.py "
                            "in snipcheck_nbval_sanitize")  # fmt: skip
            continue
        found = read(text, name)
        normalizers.extend(found.normalizers)
        problems.extend(found.problems)
    return Sanitizers(tuple(normalizers), tuple(problems))
