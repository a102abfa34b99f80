"""Named normalizers: rewrites applied to both stated and actual output.

Each normalizer is a pure function ``str -> str`` registered under a name, so
configuration can list them by name (``snipcheck_normalizers`` in ``conf.py``).
Two kinds:

* **display** normalizers rewrite machine-specific text to a canonical form
  that is still true (a path into site-packages becomes
  ``.../site-packages/torch/_tensor.py``).  They are applied to the actual
  output before it is shown on the page or recorded into the chapter source.
* **compare-only** normalizers mask text that legitimately changes between
  equivalent runs (line numbers inside torch's own files).  They are applied
  to both sides just before comparing, never to what readers see.

A compare-only normalizer of what changes with every run of the same code
(a time, a process id, a memory address) also has a **mask**: the text with
each such part written as the wildcard ``[..]``.  The verify report, which is
committed, holds its outputs masked so (:mod:`snipcheck.report.steady`).

The snippet's own line numbers are never touched: they are the reader's.

Pure core: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Normalizer:
    """A named rewrite.

    :param name: the name used in configuration.
    :param func: the rewrite.
    :param display: ``True`` if the rewrite may be shown to readers.
    :param doc: one line saying what it does.
    :param mask: for a normalizer of what changes from run to run, the text
        with each such part replaced by ``[..]``; ``None`` for the others.
    """

    name: str
    func: Callable[[str], str]
    display: bool
    doc: str
    mask: Callable[[str], str] | None = None

    def __call__(self, text: str) -> str:
        return self.func(text)


REGISTRY: dict[str, Normalizer] = {}


def register(
    name: str, *, display: bool, mask: Callable[[str], str] | None = None
) -> Callable[[Callable[[str], str]], Callable[[str], str]]:
    """Decorator adding a function to :data:`REGISTRY` under ``name``; its
    docstring's first line becomes the normalizer's description.

    :param mask: see :attr:`Normalizer.mask`.
    """

    def deco(func: Callable[[str], str]) -> Callable[[str], str]:
        doc = (func.__doc__ or "").strip().splitlines()[0] if func.__doc__ else ""
        REGISTRY[name] = Normalizer(name, func, display, doc, mask)
        return func

    return deco


# Every pattern below takes time linear in the text, whatever it holds (a
# 1 MB output goes through each of them): a path starts at a "/" that no
# word character or "." precedes (written after the "/", so the regular
# expression engine looks for "/" first), and holds at most _SEGMENTS
# directories before what it looks for, so a start that finds nothing gives
# up after that many ("/-/-/-..." made every "/" scan the rest of the text);
# a file name within a path is at most _NAME characters long (a snippet id
# is at most 100).
_SEGMENTS = 32
_NAME = 300
_PATH = rf"/(?<![\w.]/)(?:[^\s\"'/:]+/){{1,{_SEGMENTS}}}?"
# An absolute POSIX path up to and including a site-packages-like directory.
_SITE = re.compile(_PATH + r"(?:lib/python\d+(?:\.\d+)?/)?(site-packages|dist-packages)/")
# An absolute path to the standard library of some interpreter.
_STDLIB = re.compile(_PATH + r"lib/(python\d+\.\d+)/(?!site-packages|dist-packages)")
_SNIPPET = re.compile(_PATH + rf"(snippets/[\w./-]{{1,{_NAME}}}\.(?:py|rs))")
_TORCH_FILE_LINE = re.compile(r'(File "\.\.\./(?:site|dist)-packages/torch/[^"]+", line )\d+')
_TORCH_COLON_LINE = re.compile(rf"(\.\.\./(?:site|dist)-packages/torch/[\w./-]{{1,{_NAME}}}\.py):\d+:")
_TRIGGERED = re.compile(r"\(Triggered internally at [^()\n]*?:\d+\.\)")
# An address where Python's default repr prints one ("<object object at
# 0x7f3a2c1b9e50>", "<function f at 0x...>", "<weakref at 0x...; to 'A' at
# 0x...>"): "at " before it, inside the innermost "<...>" of one line (an
# object's repr, also one nested in another's).  Any other hex number (a CRC,
# a mask, a hash, a pointer printed bare, "owed at 0x1000000" in a sentence)
# is compared as printed: a page writes a wildcard where such a value varies.
_ADDRESS = re.compile(r"(?<=\bat )0x[0-9a-fA-F]{6,16}\b")
_REPR = re.compile(r"<[^<>\n]*>")


def _addresses(text: str, replacement: str) -> str:
    """``text`` with each :data:`_ADDRESS` inside an object's repr (:data:`_REPR`) written ``replacement``."""
    if "0x" not in text:
        return text
    return _REPR.sub(lambda m: _ADDRESS.sub(replacement, m.group()) if "0x" in m.group() else m.group(), text)


@register("python-paths", display=True)
def python_paths(text: str) -> str:
    """Paths into site-packages, virtual environments and the standard library become ``.../site-packages/`` and ``.../lib/pythonX.Y/``."""
    text = _SITE.sub(lambda m: f".../{m.group(1)}/", text)
    return _STDLIB.sub(lambda m: f".../lib/{m.group(1)}/", text)


@register("snippet-path", display=True)
def snippet_path(text: str) -> str:
    """An absolute path to a snippet file becomes ``snippets/<id>.py``, as a reader running it from the project root sees it."""
    return _SNIPPET.sub(lambda m: m.group(1), text)


@register("torch-line-numbers", display=False)
def torch_line_numbers(text: str) -> str:
    """Line numbers inside torch's own files (they move between releases) become ``N``; run after ``python-paths``."""
    text = _TORCH_FILE_LINE.sub(lambda m: m.group(1) + "N", text)
    return _TORCH_COLON_LINE.sub(lambda m: m.group(1) + ":N:", text)


@register("torch-triggered-internally", display=False)
def torch_triggered_internally(text: str) -> str:
    """The ``(Triggered internally at …/file.cpp:NNN.)`` suffix of torch's C++ warnings becomes ``(Triggered internally at torch's C++ source.)``."""
    return _TRIGGERED.sub("(Triggered internally at torch's C++ source.)", text)


def _masks(pattern: re.Pattern[str], replacement: str) -> Callable[[str], str]:
    """A :attr:`Normalizer.mask`: ``pattern``'s matches become ``replacement``
    (which writes the varying part as ``[..]``)."""
    return lambda text: pattern.sub(replacement, text)


@register("memory-addresses", display=False, mask=lambda text: _addresses(text, "0x[..]"))
def memory_addresses(text: str) -> str:
    """Memory addresses in object reprs such as ``<object object at 0x7f3a2c1b9e50>`` become ``0x...``; other hex numbers stay."""
    return _addresses(text, "0x...")


# torch's own log lines (torch._logging, glog's layout): level, date and time, process id, file:line].
_TORCH_LOG = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ ([\w./-]+\.py):\d+\]", re.MULTILINE)
# Its date, time and process id (the line number moves between releases, not runs).
_TORCH_LOG_RUN = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ (?=[\w./-]+\.py:\d+\])", re.MULTILINE)


@register("torch-log-prefix", display=False, mask=_masks(_TORCH_LOG_RUN, r"\g<1>[..] "))
def torch_log_prefix(text: str) -> str:
    """The date, time, process id and line number at the start of torch's own log lines (``W1201 20:31:19.251000 22 torch/utils/cpp_extension.py:183]``) become ``MMDD hh:mm:ss.ffffff PID`` and ``N``: they change with every run."""
    return _TORCH_LOG.sub(lambda m: f"{m.group(1)}MMDD hh:mm:ss.ffffff PID {m.group(2)}:N]", text)


# The log line a CUDA build of torch writes when it finds no CUDA runtime (a
# machine without a GPU), e.g. the first call of torch.compile on 2.14.1+cu130:
# raw or after torch-log-prefix; a bounded line, so linear in the output.
_NO_CUDA_RUNTIME = re.compile(
    r"^[IWEF][^\n]{0,80}? torch/utils/cpp_extension\.py:\w{1,10}\] (?:\[[^\]\n]{0,40}\] )?"
    r"No CUDA runtime is found, using CUDA_HOME=[^\n]{0,4096}(?:\n|\Z)",
    re.MULTILINE,
)


@register("torch-no-cuda-runtime", display=False)
def torch_no_cuda_runtime(text: str) -> str:
    """The line a CUDA build of torch logs on a machine without a GPU (``W… torch/utils/cpp_extension.py:183] [0/0] No CUDA runtime is found, using CUDA_HOME='/usr/local'``) is left out: it says what the build is, not what the code does; a verify report lists it as masked."""
    return _NO_CUDA_RUNTIME.sub("", text)


_RUST_THREAD = re.compile(r"(thread '[^'\n]*') \(\d+\)")


@register("rust-thread-ids", display=False, mask=_masks(_RUST_THREAD, r"\g<1> ([..])"))
def rust_thread_ids(text: str) -> str:
    """The thread id in Rust panic messages, ``thread 'main' (4242) panicked``, becomes ``(N)``: it changes with every run."""
    return _RUST_THREAD.sub(lambda m: m.group(1) + " (N)", text)


#: The normalizers used when ``conf.py`` names none.
DEFAULT = (
    "python-paths",
    "snippet-path",
    "torch-line-numbers",
    "torch-triggered-internally",
    "memory-addresses",
    "torch-log-prefix",
    "torch-no-cuda-runtime",
    "rust-thread-ids",
)


def resolve(names: Iterable[str]) -> tuple[Normalizer, ...]:
    """Look normalizers up by name, keeping the given order.

    :raises KeyError: naming the first unknown name and listing the known ones.
    """
    out = []
    for name in names:
        if name not in REGISTRY:
            raise KeyError(f"unknown normalizer {name!r}; known: {', '.join(sorted(REGISTRY))}")
        out.append(REGISTRY[name])
    return tuple(out)


def pipeline(normalizers: Iterable[Normalizer], *, masking: bool = True) -> tuple[Normalizer, ...]:
    """The normalizers in the order they run: the display ones, then (with
    ``masking``) the compare-only ones, each kind in its configured order."""
    normalizers = tuple(normalizers)
    return tuple(n for n in normalizers if n.display) + (tuple(n for n in normalizers if not n.display) if masking else ())


def for_display(text: str, normalizers: Iterable[Normalizer]) -> str:
    """Apply only the display normalizers (what readers and the chapter source see)."""
    for n in pipeline(normalizers, masking=False):
        text = n(text)
    return text


def mask_runs(text: str, normalizers: Iterable[Normalizer]) -> str:
    """``text`` with every part that changes from run to run written ``[..]``
    (each normalizer's :attr:`Normalizer.mask`, in the configured order)."""
    for n in normalizers:
        if n.mask is not None:
            text = n.mask(text)
    return text


def for_compare(text: str, normalizers: Iterable[Normalizer]) -> str:
    """Apply every normalizer, display ones first (the compare-only ones rely on their canonical paths)."""
    for n in pipeline(normalizers):
        text = n(text)
    return text
