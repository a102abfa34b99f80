"""What is compared of a notebook's rich outputs (``execute_result``, ``display_data``).

Jupyter stores a displayed object as a bundle of the same object in several
mime types.  A plain run of the cell's code prints one of them, the
``repr``, which is the bundle's ``text/plain``; so:

* ``text/plain`` is compared, when the bundle has one;
* ``text/html``, ``text/markdown``, ``text/latex``, ``application/json``,
  ``image/svg+xml``, ``image/jpeg`` and widget views
  (``application/vnd.jupyter.widget-view+json``) beside a ``text/plain`` are
  renderings of what ``text/plain`` states: not compared, and not reported;
* a bundle without ``text/plain`` states nothing a plain run could print: its
  mime types are reported as not compared (:func:`unchecked`);
* ``image/png`` is a figure.  A ``display_data`` holding one is what
  IPython's inline matplotlib backend shows at the end of a cell; its
  ``text/plain`` (``<Figure size 640x480 with 1 Axes>``) is not stated,
  since no plain run prints it.  Figures are not compared yet: every
  ``image/png`` is reported as not compared, so a cell whose only output is
  a figure is never shown green as if it had been checked.

Pure core: standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["FIGURE", "PLAIN", "plain_text", "unchecked"]

PLAIN = "text/plain"
FIGURE = "image/png"
_RICH = ("execute_result", "display_data")


def plain_text(output: Mapping[str, Any]) -> str | list[str] | None:
    """The stated ``text/plain`` of a rich output, or ``None`` where it states none.

    :param output: an ``execute_result`` or ``display_data`` output.
    """
    data = output.get("data", {})
    if output.get("output_type") == "display_data" and FIGURE in data:
        return None  # a figure's repr, which a plain run never prints
    text = data.get(PLAIN)
    return text if isinstance(text, (str, list)) else None


def unchecked(outputs: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The mime types of a cell's stored outputs that are not compared, each
    once, in order: every ``image/png``, and every type of a bundle without
    ``text/plain``."""
    found: dict[str, None] = {}
    for output in outputs:
        if output.get("output_type") not in _RICH:
            continue
        data = output.get("data", {})
        if FIGURE in data:
            found[FIGURE] = None
        if PLAIN not in data:
            found.update(dict.fromkeys(data))
    return tuple(found)
