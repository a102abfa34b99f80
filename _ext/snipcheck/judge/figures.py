"""Stated figures: where they live, how a run's figures are checked against them.

A run's figures (:attr:`snipcheck.model.RunResult.figures`: what it showed
with ``plt.show()`` or saved as ``*.png``/``*.svg`` in its working directory)
stand in its text output as placeholder lines, ``[figure 1: 640×480 PNG]``.
The stated output states them with the same line, and the image itself is a
file beside the pages, named by the snippet id and the figure's number:

    <source dir>/_snipcheck_figures/<snippet id>-<n>.<png|svg>

(``inplace/plot`` → ``_snipcheck_figures/inplace/plot-1.png``), written by
``record`` (:func:`recorded_files`), never by hand and never under
``snippets/``.  The text comparison checks the placeholder lines like any
other line (how many figures, their size, the name a file was saved under);
:func:`check` then compares each PNG figure with its stated file
tolerantly (:func:`snipcheck.png.compare`): identical bytes match at once,
otherwise both are decoded and compared pixel by pixel.  SVG figures are shown
but not compared (matplotlib writes a date and random ids into every SVG).

Pure core: standard library, :mod:`snipcheck.model`, :mod:`snipcheck.png`,
:mod:`snipcheck.files`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from snipcheck import png
from snipcheck.files import write_atomic
from snipcheck.model import Figure

#: The folder of stated figures, in the pages' source directory.
FIGURES_DIR = "_snipcheck_figures"


@dataclass(frozen=True)
class FigureCheck:
    """The verdict on one figure of a run.

    :param number: its 1-based number among the run's figures.
    :param stated: its stated file (which may not exist).
    :param status: ``"ok"``, ``"drift"`` (differs beyond the tolerance),
        ``"missing"`` (no stated file yet) or ``"unchecked"`` (SVG, or not kept).
    :param detail: what was measured or found, in words (``""`` when ``ok``).
    :param difference: the measurement, when both were decoded.
    """

    number: int
    stated: Path
    status: str
    detail: str = ""
    difference: png.Difference | None = None

    @property
    def ok(self) -> bool:
        """Whether this figure needs nothing done."""
        return self.status in ("ok", "unchecked")


def stated_path(srcdir: Path, snippet_id: str, number: int, fmt: str) -> Path:
    """The stated file of figure ``number`` (1-based) of ``snippet_id``.

    :param srcdir: the pages' source directory.
    :param fmt: ``"png"`` or ``"svg"``.
    """
    return Path(srcdir) / FIGURES_DIR / f"{snippet_id}-{number}.{fmt}"


def check(snippet_id: str, figures: Sequence[Figure], srcdir: Path) -> tuple[FigureCheck, ...]:
    """Compare each of a run's figures with its stated file (see the module docstring).

    :param figures: the run's figures, in order.
    :param srcdir: the pages' source directory.
    :return: one verdict per figure, in order.
    """
    out = []
    for number, figure in enumerate(figures, start=1):
        path = stated_path(srcdir, snippet_id, number, figure.format)
        if figure.dropped or figure.format != "png":
            why = "not kept (over the figure limit)" if figure.dropped else "SVG figures are not compared"
            out.append(FigureCheck(number, path, "unchecked", why))
            continue
        try:
            stated = path.read_bytes()
        except FileNotFoundError:
            out.append(FigureCheck(number, path, "missing", "no stated image yet"))
            continue
        except OSError as exc:
            out.append(FigureCheck(number, path, "missing", f"cannot read its stated image ({exc.strerror})"))
            continue
        out.append(compare_bytes(number, path, stated, figure.data))
    return tuple(out)


def problems(snippet_id: str, figures: Sequence[Figure], srcdir: Path) -> tuple[str, ...]:
    """One sentence (:func:`sentence`) per figure of :func:`check` that is not ok."""
    return tuple(sentence(c, c.stated.relative_to(srcdir).as_posix()) for c in check(snippet_id, figures, srcdir) if not c.ok)


def sentence(found: FigureCheck, shown: str) -> str:
    """What is wrong with a figure, naming it and its stated file (as ``shown``)."""
    if found.status == "missing":
        return f"figure {found.number} has no stated image {shown} ({found.detail})"
    return f"figure {found.number} differs from its stated image {shown}: {found.detail}"


_PLACEHOLDER = re.compile(r"^\[figure [1-9][0-9]*: [^\n]*\]$", re.MULTILINE)


def placeholders(text: str) -> int:
    """How many figure placeholder lines ``text`` (an output) holds."""
    return len(_PLACEHOLDER.findall(text))


def compare_bytes(number: int, path: Path, stated: bytes, actual: bytes) -> FigureCheck:
    """The verdict on figure ``number``: ``stated`` (the file at ``path``) against ``actual``."""
    if stated == actual:
        return FigureCheck(number, path, "ok")
    try:
        difference = png.compare(png.decode(stated), png.decode(actual))
    except png.PNGError as exc:
        return FigureCheck(number, path, "drift", f"its bytes differ and the images cannot be compared ({exc})")
    if difference.matches:
        return FigureCheck(number, path, "ok", difference=difference)
    return FigureCheck(number, path, "drift", difference.describe(), difference)


def stable(first: Sequence[Figure], second: Sequence[Figure]) -> str | None:
    """Why two runs of the same code gave figures no stated file can match
    (``None`` if they match each other): for ``record``, like its check of the text."""
    for number, (a, b) in enumerate(zip(first, second, strict=False), start=1):
        if a.format == b.format == "png" and not a.dropped and not b.dropped:
            found = compare_bytes(number, Path(), a.data, b.data)
            if not found.ok:
                return f"figure {number} differs between two runs of the same code: {found.detail}"
    return None


def recorded_files(srcdir: Path, snippet_id: str, figures: Sequence[Figure]) -> dict[Path, bytes]:
    """The stated files that record the run's ``figures`` (those kept), by path."""
    return {
        stated_path(srcdir, snippet_id, number, f.format): f.data
        for number, f in enumerate(figures, start=1)
        if not f.dropped
    }


def stale_files(srcdir: Path, snippet_id: str, count: int) -> list[Path]:
    """Stated files of ``snippet_id`` beyond its first ``count`` figures (or of
    another format than the figure now has that number), to remove when
    recording ``count`` figures."""
    folder = stated_path(srcdir, snippet_id, 1, "png").parent
    stem = snippet_id.rsplit("/", 1)[-1]
    pattern = re.compile(re.escape(stem) + r"-([1-9][0-9]*)\.(png|svg)")
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [p for p in entries if (m := pattern.fullmatch(p.name)) and int(m.group(1)) > count]


def write_recorded(srcdir: Path, snippet_id: str, figures: Sequence[Figure]) -> list[Path]:
    """Write the stated files of ``figures`` (only those whose bytes change),
    and remove the files of figures the run no longer has.

    :return: the files written or removed.
    :raises OSError: if one cannot be written or removed.
    """
    changed = []
    for path, data in recorded_files(srcdir, snippet_id, figures).items():
        try:
            if path.read_bytes() == data:
                continue
        except OSError:
            pass
        write_atomic(path, data)
        changed.append(path)
    for number, f in enumerate(figures, start=1):
        other = stated_path(srcdir, snippet_id, number, "svg" if f.format == "png" else "png")
        if other.exists():
            other.unlink()
            changed.append(other)
    for path in stale_files(srcdir, snippet_id, len(figures)):
        path.unlink()
        changed.append(path)
    return changed


def report_images(report_dir: Path, snippet_id: str, found: FigureCheck, actual: Figure) -> tuple[Path | None, Path]:
    """Save a drifted figure's stated and actual images for the reader of the
    warning: ``<report dir>/figures/<id with / as __>-<n>.stated.png`` and
    ``….actual.png``.

    :return: the two paths (the stated one ``None`` when there is no stated file).
    :raises OSError: if they cannot be written.
    """
    base = re.sub(r"[^\w.-]", "__", snippet_id) + f"-{found.number}"
    folder = Path(report_dir) / "figures"
    actual_path = folder / f"{base}.actual.{actual.format}"
    write_atomic(actual_path, actual.data)
    try:
        stated = found.stated.read_bytes()
    except OSError:
        return None, actual_path
    stated_copy = folder / f"{base}.stated.{found.stated.suffix.lstrip('.')}"
    write_atomic(stated_copy, stated)
    return stated_copy, actual_path
