"""sphinx-gallery's configuration comments (``# sphinx_gallery_<name> = <value>``).

A sphinx-gallery script configures its own build with comment lines; none of
them is shown on the page here, and each is honoured, or has nothing to
honour, or is named in a warning:

==========================================  =========================================================
``capture_repr = ()`` (file),               honoured: no value of a last bare expression is shown
``capture_repr_block = ()`` (block)         (any other value: its plain-text ``repr`` is)
``defer_figures`` (block)                   honoured: the block's open figures are shown after the
                                            next block instead
``start_ignore`` … ``end_ignore``           honoured: the lines between run, and are not shown
``thumbnail_number``, ``thumbnail_path``,   nothing to honour: no thumbnails, line numbers as every
``failing_thumbnail``, ``line_numbers``,    snippet's, every figure an image of its own, every block
``multi_image``, ``multi_image_block``,     runs
``dummy_images``
any other name                              hidden, and named in a warning
==========================================  =========================================================

Pure core: standard library only.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["Settings", "file_settings", "hide_in_code", "hide_in_text"]

#: sphinx-gallery's pattern of a configuration comment (one line).
_FLAG = re.compile(r"^[ \t]*#\s*sphinx_gallery_(?P<name>[A-Za-z0-9_]+)(?:\s*=\s*(?P<value>.+?))?[ \t]*$")
#: The same, in a text block whose comment marks are gone.
_TEXT_FLAG = re.compile(r"^[ \t]*sphinx_gallery_[A-Za-z0-9_]+(\s*=.*)?$")

HONOURED = frozenset({"capture_repr", "capture_repr_block", "defer_figures", "start_ignore", "end_ignore"})
NOTHING_TO_DO = frozenset(
    {"thumbnail_number", "thumbnail_path", "failing_thumbnail", "line_numbers", "multi_image", "multi_image_block",
     "dummy_images"}
)  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """A script's file-level configuration comments.

    :param repr_shown: the file's ``capture_repr`` holds a method (the
        default), or is ``()``.
    :param notes: ``(line, message)`` of comments not honoured.
    """

    repr_shown: bool
    notes: tuple[tuple[int, str], ...]

    def capture_repr(self, flags: dict[str, str | None]) -> bool:
        """Whether a block with configuration ``flags`` shows its last value."""
        block = flags.get("capture_repr_block")
        return _repr_shown(block) if block is not None else self.repr_shown


def _repr_shown(value: str | None) -> bool:
    try:
        methods = ast.literal_eval(value) if value is not None else ("__repr__",)
    except (SyntaxError, ValueError):
        return True
    return bool(methods)


def file_settings(lines: list[str], start: int) -> Settings:
    """The configuration comments of the script's lines from ``start`` on."""
    shown = True
    notes: list[tuple[int, str]] = []
    for number, line in enumerate(lines[start:], start=start + 1):
        m = _FLAG.match(line)
        if m is None:
            continue
        name = m.group("name")
        if name == "capture_repr":
            shown = _repr_shown(m.group("value"))
        elif name not in HONOURED and name not in NOTHING_TO_DO:
            message = (
                f"'# sphinx_gallery_{name}' is not a sphinx-gallery setting snipcheck knows: it is hidden and has "
                "no effect here; remove it, or fix its name"
            )
            notes.append((number, message))
    return Settings(shown, tuple(notes))


def hide_in_code(code: str) -> tuple[str, dict[str, str | None]]:
    """A code block as the page shows it, and its configuration comments.

    :return: ``(shown, flags)``: the code without configuration comments and
        without the lines from ``start_ignore`` to ``end_ignore`` (both
        included; an unmatched ``start_ignore`` hides to the block's end), and
        each comment's name → its value (``None`` for a bare flag).
    """
    shown: list[str] = []
    flags: dict[str, str | None] = {}
    ignoring = False
    for line in code.split("\n"):
        m = _FLAG.match(line)
        if m is not None:
            name = m.group("name")
            flags[name] = m.group("value")
            if name == "start_ignore":
                ignoring = True
            elif name == "end_ignore":
                ignoring = False
            continue
        if not ignoring:
            shown.append(line)
    while shown and not shown[-1].strip():
        shown.pop()
    while shown and not shown[0].strip():
        shown.pop(0)
    return "\n".join(shown), flags


def hide_in_text(text: str) -> str:
    """A text block without its configuration comment lines."""
    if "sphinx_gallery_" not in text:
        return text
    return "\n".join(line for line in text.split("\n") if not _TEXT_FLAG.match(line))
