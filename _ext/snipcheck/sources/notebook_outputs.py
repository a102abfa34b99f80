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
* a ``display_data`` holding an ``image/png`` is a figure, what IPython's
  inline matplotlib backend shows (at ``plt.show()`` or at the end of the
  cell).  It is stated as the figure's placeholder line,
  ``[figure 1: 556×413 PNG]`` (:meth:`snipcheck.model.Figure.placeholder`),
  and its image is the figure's stated image (:func:`figures`), compared with
  the run's figure by the figure check; its ``text/plain``
  (``<Figure size 640x480 with 1 Axes>``) is not stated, since no plain run
  prints it.  An ``image/png`` in an ``execute_result`` (an object whose
  ``repr`` the plain run prints, such as a PIL image) is reported as not
  compared.

Pure core: standard library, :mod:`snipcheck.png` and :mod:`snipcheck.model`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

from snipcheck import png
from snipcheck.model import Figure

__all__ = ["FIGURE", "PLAIN", "figure", "figures", "plain_text", "unchecked"]

PLAIN = "text/plain"
FIGURE = "image/png"
_RICH = ("execute_result", "display_data")


def figure(output: Mapping[str, Any]) -> Figure | None:
    """The figure a ``display_data`` output stores, or ``None`` for any other output.

    A PNG whose base64 text cannot be decoded is a figure with no size, which
    the figure check finds different from any the run draws.
    """
    if output.get("output_type") != "display_data":
        return None
    data = output.get("data", {}).get(FIGURE)
    if data is None:
        return None
    text = "".join(data) if isinstance(data, list) else str(data)
    try:
        raw = base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        raw = b""
    size = png.size(raw)
    return Figure("png", raw, width=size[0] if size else None, height=size[1] if size else None)


def figures(outputs: Iterable[Mapping[str, Any]]) -> tuple[Figure, ...]:
    """The stored figures of a cell, in order (see :func:`figure`)."""
    return tuple(f for f in map(figure, outputs) if f is not None)


def plain_text(output: Mapping[str, Any]) -> str | list[str] | None:
    """The stated ``text/plain`` of a rich output, or ``None`` where it states none.

    :param output: an ``execute_result`` or ``display_data`` output.
    """
    if figure(output) is not None:
        return None  # a figure's repr, which a plain run never prints
    text = output.get("data", {}).get(PLAIN)
    return text if isinstance(text, (str, list)) else None


def unchecked(outputs: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The mime types of a cell's stored outputs that are not compared, each
    once, in order: an ``image/png`` that is not a figure, and every type of
    a bundle without ``text/plain`` (but a figure's PNG)."""
    found: dict[str, None] = {}
    for output in outputs:
        if output.get("output_type") not in _RICH:
            continue
        data = output.get("data", {})
        shown = figure(output) is not None
        if FIGURE in data and not shown:
            found[FIGURE] = None
        if PLAIN not in data:
            found.update(dict.fromkeys(k for k in data if not (shown and k == FIGURE)))
    return tuple(found)
