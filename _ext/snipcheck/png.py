"""Read PNG images and measure how much two of them differ, with the standard library only.

:func:`decode` reads what matplotlib writes (8-bit RGBA, not interlaced) and
every other non-interlaced PNG of 8 or 16 bits per sample (greyscale, grey
with alpha, RGB, RGBA) or 8-bit palette, into 8-bit RGBA pixels: ``zlib``
for the data, and the five PNG row filters undone row by row (filters 0-2 on
whole rows at once, 3 and 4 byte by byte).

:func:`compare` is the tolerant comparison of two figures; see
:data:`MEAN_LIMIT` and :data:`STRONG_LIMIT` for the metric and its thresholds.

Pure core: standard library only.
"""

from __future__ import annotations

import itertools
import operator
import zlib
from dataclasses import dataclass
from functools import lru_cache

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: A pixel differs *strongly* when one of its channels differs by more than this (of 255).
STRONG_CHANNEL = 64
#: Two figures match when the mean absolute difference of their 8-bit channel
#: values (R, G, B and alpha of every pixel) is at most this ...
MEAN_LIMIT = 1.0
#: ... and fewer than this share of their pixels differ strongly.  Antialiasing
#: noise moves many edge pixels by a little and few by much; a changed line,
#: bar or point moves every pixel it covers by much, and so does changed text:
#: a new axis label in a 500×300 figure changes about 0.26% of its pixels
#: strongly, a changed title 0.37% (measured), so the limit sits below both.
STRONG_LIMIT = 0.001

_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


class PNGError(ValueError):
    """Bytes this module cannot read as a PNG image (the message says why)."""


@dataclass(frozen=True)
class Image:
    """A decoded image.

    :param width: in pixels; :param height: in pixels.
    :param rows: one ``bytes`` per row, top first, of ``width * 4`` bytes:
        8-bit R, G, B, alpha per pixel.
    """

    width: int
    height: int
    rows: tuple[bytes, ...]


@dataclass(frozen=True)
class Difference:
    """How two images differ (see :func:`compare`).

    :param size: ``None`` when both have one size, else ``"640×480 → 800×600"``.
    :param mean: mean absolute difference of the channel values, 0 to 255.
    :param strong: share of the pixels that differ strongly, 0 to 1.
    """

    size: str | None
    mean: float = 0.0
    strong: float = 0.0

    @property
    def matches(self) -> bool:
        """Whether the images count as the same figure."""
        return self.size is None and self.mean <= MEAN_LIMIT and self.strong < STRONG_LIMIT

    def describe(self) -> str:
        """The measurement in words, with the thresholds."""
        if self.size is not None:
            return f"its size changed ({self.size})"
        return (
            f"mean channel difference {self.mean:.2f} (at most {MEAN_LIMIT:g} matches), "
            f"{self.strong:.2%} of the pixels differ by more than {STRONG_CHANNEL} "
            f"(fewer than {STRONG_LIMIT:.1%} match)"
        )


def size(data: bytes | bytearray) -> tuple[int, int] | None:
    """``(width, height)`` from a PNG's header, or ``None`` if ``data`` is not a PNG."""
    if len(data) < 24 or data[:8] != SIGNATURE or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def decode(data: bytes) -> Image:
    """The pixels of a PNG (see the module docstring for what it reads).

    :raises PNGError: for something else: another format, an interlaced or
        low-bit-depth image, damaged data.
    """
    if data[:8] != SIGNATURE:
        raise PNGError("not a PNG file")
    pos, head, palette, alpha, idat = 8, b"", b"", b"", []
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if len(body) != length:
            raise PNGError("the file is cut short")
        if kind == b"IHDR":
            head = body
        elif kind == b"PLTE":
            palette = body
        elif kind == b"tRNS":
            alpha = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if len(head) != 13:
        raise PNGError("no image header")
    width, height = int.from_bytes(head[0:4], "big"), int.from_bytes(head[4:8], "big")
    depth, colour, interlace = head[8], head[9], head[12]
    if colour not in _CHANNELS or interlace != 0 or depth not in ((8,) if colour == 3 else (8, 16)):
        raise PNGError(f"unsupported PNG: colour type {colour}, {depth} bits, interlace {interlace}")
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as exc:
        raise PNGError(f"damaged image data ({exc})") from None
    bpp = _CHANNELS[colour] * depth // 8
    stride = width * bpp
    if len(raw) < (stride + 1) * height:
        raise PNGError("the image data is cut short")
    rows: list[bytes] = []
    prev = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        filter_type, line = raw[start], raw[start + 1 : start + 1 + stride]
        row = _unfilter(filter_type, line, prev, bpp)
        rows.append(row)
        prev = row
    return Image(width, height, tuple(_rgba(row, colour, depth, palette, alpha) for row in rows))


def compare(a: Image, b: Image) -> Difference:
    """The difference between two images: their sizes, then the mean absolute
    difference of every channel value and the share of pixels of which some
    channel differs by more than :data:`STRONG_CHANNEL` (rows that are
    identical cost nothing)."""
    if (a.width, a.height) != (b.width, b.height):
        return Difference(f"{a.width}×{a.height} → {b.width}×{b.height}")
    total = strong = 0
    over = STRONG_CHANNEL.__lt__
    for ra, rb in zip(a.rows, b.rows, strict=True):
        if ra == rb:
            continue
        diffs = list(map(abs, map(operator.sub, ra, rb)))
        total += sum(diffs)
        flags = iter(list(map(over, diffs)))
        strong += sum(map(any, zip(flags, flags, flags, flags)))
    pixels = a.width * a.height or 1
    return Difference(None, total / (pixels * 4), strong / pixels)


def _unfilter(kind: int, line: bytes, prev: bytes, bpp: int) -> bytes:
    """Undo one row's filter (PNG specification, section 9)."""
    if kind == 0:
        return line
    if kind == 1:  # Sub: a running sum per byte position within the pixel
        out = bytearray(len(line))
        for k in range(bpp):
            out[k::bpp] = bytes(map((255).__and__, itertools.accumulate(line[k::bpp])))
        return bytes(out)
    if kind == 2:  # Up
        return _add(line, prev)
    if kind == 3:  # Average
        out = bytearray(line)
        for i in range(len(out)):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + prev[i]) >> 1)) & 255
        return bytes(out)
    if kind == 4:  # Paeth
        out = bytearray(line)
        for i in range(len(out)):
            if i >= bpp:
                a, c = out[i - bpp], prev[i - bpp]
            else:
                a = c = 0
            b = prev[i]
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - c - c)
            out[i] = (out[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        return bytes(out)
    raise PNGError(f"unknown row filter {kind}")


@lru_cache(maxsize=8)
def _masks(n: int) -> int:
    """An ``n``-byte integer whose even bytes (little-endian) are 0xFF."""
    return int.from_bytes(b"\xff\x00" * (n // 2) + b"\xff" * (n % 2), "little")


def _add(x: bytes, y: bytes) -> bytes:
    """``x[i] + y[i]`` modulo 256 for every byte, on whole rows at once: the
    even and the odd bytes are added apart, so no carry reaches a neighbour."""
    n = len(x)
    a, b, even = int.from_bytes(x, "little"), int.from_bytes(y, "little"), _masks(n)
    low = ((a & even) + (b & even)) & even
    high = (((a >> 8) & even) + ((b >> 8) & even)) & even
    return (low | (high << 8)).to_bytes(n + 1, "little")[:n]


def _rgba(row: bytes, colour: int, depth: int, palette: bytes, alpha: bytes) -> bytes:
    """One unfiltered row as 8-bit RGBA."""
    if depth == 16:
        row = row[::2]  # the high byte of each sample
    if colour == 6:
        return row
    out = bytearray(len(row) // _CHANNELS[colour] * 4)
    if colour == 2:
        for k in range(3):
            out[k::4] = row[k::3]
        out[3::4] = b"\xff" * (len(row) // 3)
    elif colour == 0:
        out[0::4] = out[1::4] = out[2::4] = row
        out[3::4] = b"\xff" * len(row)
    elif colour == 4:
        out[0::4] = out[1::4] = out[2::4] = row[0::2]
        out[3::4] = row[1::2]
    else:  # palette
        table = [palette[3 * i : 3 * i + 3] + (alpha[i : i + 1] or b"\xff") for i in range(len(palette) // 3)]
        try:
            return b"".join(table[i] for i in row)
        except IndexError:
            raise PNGError("a palette index beyond the palette") from None
    return bytes(out)
