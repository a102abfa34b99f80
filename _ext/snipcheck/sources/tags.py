"""Read a snippet's tag block.

A snippet file may carry one tag block, a TOML table written as comment lines
in the style of PEP 723, either as the first or as the last lines of the file::

    # /// snipcheck
    # expect = "RuntimeError"
    # requires = ["cuda"]
    # timeout = 20
    # ///

Rust snippets use ``//`` instead of ``#``.  The block is not shown on the page;
when it sits at the top, the page numbers the code from the file's own line
numbers so that tracebacks and the page agree.

Pure core: imports only the standard library and :mod:`snipcheck.model`.
"""

from __future__ import annotations

import math
import re
import signal
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from snipcheck.model import Tags

#: A run's wall-clock cap, in multiples of its timeout, which counts CPU
#: seconds (see :mod:`snipcheck.run.cputime`): a run that waits (a sleep,
#: I/O, a lock) is stopped there.
WALL_FACTOR = 10.0
#: The longest timeout a tag or ``snipcheck_timeout`` may set, in seconds (24 h).
MAX_TIMEOUT = 24 * 3600.0
#: The largest seed (numpy's legacy generator takes 32 bits).
MAX_SEED = 2**32 - 1

#: Keys a tag block may hold, with a one-line description used in errors.
KNOWN_KEYS = {
    "expect": 'what the run must do: "ok", an exception type name, "panic" or '
    '"compile error" (Rust), "exit N" (0 to 255) or "signal NAME" (e.g. "signal SIGSEGV")',
    "requires": 'a list of requirements, e.g. ["cuda"], ["torch>=2.14"], or names listed in snipcheck_requirements',
    "timeout": f"limit in CPU seconds of the run's processes, with a wall-clock cap of {WALL_FACTOR:g} times as many "
    f"seconds (a finite number greater than 0 and at most {MAX_TIMEOUT:g}, i.e. 24 h)",
    "refutes": "for a refuted-claim snippet: the belief it tests (a string)",
    "memory": 'memory limit of the run, e.g. "8 GiB" (default: snipcheck_memory_limit)',
    "env": 'names of environment variables the snippet reads, e.g. ["MY_VAR"] '
    "(passed through to the run; a change re-runs the snippet)",
    "depends": 'data files the snippet reads, relative to the project root (globs allowed), '
    'e.g. ["data/table.csv", "data/*.json"] (copied into the run directory; a change re-runs the snippet)',
    "seed": f'a whole number from 0 to {MAX_SEED}: Python\'s random, numpy\'s global generator and torch are '
    'seeded with it at the start of the run (of the chain, for its first cell); or "fresh": fresh '
    "randomness, as under plain python (default: snipcheck_seed)",
    "output-limit": "bytes of output kept of the run, a whole number greater than 0, e.g. 4194304 "
    "(default: snipcheck_output_limit)",
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)?\s*$")
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
          "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}  # fmt: skip


def parse_size(value: object) -> int:
    """A memory size: ``"8 GiB"``, ``"512 MiB"``, ``"2 GB"`` or a whole number of bytes.

    :raises ValueError: for anything else (the message says what to write).
    """
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    m = _SIZE_RE.match(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f'expected a size such as "4 GiB" or "512 MiB", got {value!r}')
    return int(float(m.group(1)) * _UNITS[m.group(2) or "B"])

#: Variables every run gets from the runner (see run/python.py
#: ``child_environment``); an ``env`` tag cannot pass them through.
FIXED_VARIABLES = frozenset({"HOME", "TMPDIR", "LANG", "LC_ALL", "TZ"})
FIXED_PREFIXES = ("PYTHON", "SNIPCHECK_")
_VARIABLE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_COMMENT = {"python": "#", "rust": "//"}
#: The ``seed`` tag's value for fresh randomness (plain python's), whatever ``snipcheck_seed`` says.
FRESH = "fresh"
_EXPECT_RE = re.compile(
    r"^(ok|panic|compile error|exit \d{1,3}|signal SIG[A-Z0-9]+|[A-Za-z_][\w.]*)$"
)


class TagError(ValueError):
    """A malformed tag block.

    :param message: what is wrong and what to write instead.
    :param line: 1-based line in the snippet file.
    """

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class TagBlock:
    """Where the tag block sits and what it says.

    :param tags: the parsed tags (defaults when the file has no block).
    :param code: the file without the block (and without the blank lines that
        separated it from the code).
    :param code_lineno: file line number of the first line of ``code``.
    :param key_lines: file line number of each key of the block.
    """

    tags: Tags
    code: str
    code_lineno: int
    key_lines: Mapping[str, int] = field(default_factory=dict)


def parse(source: str, language: str = "python") -> TagBlock:
    """Split ``source`` into its tag block and the code shown on the page.

    :param source: the whole snippet file.
    :param language: ``"python"`` or ``"rust"`` (selects the comment marker).
    :return: the tags, the code without the block, and its first line number.
    :raises TagError: on a block that is unterminated, not at the top or the
        bottom of the file, not valid TOML, or holds an unknown key or a value
        of the wrong type.
    """
    marker = _COMMENT[language]
    lines = source.splitlines()
    opener = f"{marker} /// snipcheck"
    closer = f"{marker} ///"
    starts = [i for i, line in enumerate(lines) if line.rstrip() == opener]
    if not starts:
        stray = next(
            (i for i, line in enumerate(lines) if line.strip().startswith(f"{marker} ///")),
            None,
        )
        if stray is not None:
            raise TagError(
                f"found {lines[stray].strip()!r} but a tag block must open with "
                f"exactly {opener!r}",
                stray + 1,
            )
        return TagBlock(Tags(), _strip_blank_edges(lines), 1)
    if len(starts) > 1:
        raise TagError("more than one tag block; merge them into one", starts[1] + 1)
    start = starts[0]
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].rstrip() == closer), None
    )
    if end is None:
        raise TagError(
            f"tag block opened here is never closed; end it with a line {closer!r}",
            start + 1,
        )
    before = lines[:start]
    after = lines[end + 1 :]
    at_top = not any(line.strip() for line in before)
    at_bottom = not any(line.strip() for line in after)
    if not (at_top or at_bottom):
        raise TagError(
            "the tag block must be the first or the last lines of the file, "
            "not between lines of code",
            start + 1,
        )
    body = []
    for offset, line in enumerate(lines[start + 1 : end]):
        if line.rstrip() == marker:
            body.append("")
        elif line.startswith(marker + " "):
            body.append(line[len(marker) + 1 :])
        else:
            raise TagError(
                f"every line inside the tag block must start with {marker + ' '!r}",
                start + 2 + offset,
            )
    text = "\n".join(body)
    tags = _to_tags(text, first_line=start + 2, language=language)
    key_lines = _key_lines(text, start + 2)
    if at_top:
        code_lines = after
        first = end + 2
        while code_lines and not code_lines[0].strip():
            code_lines = code_lines[1:]
            first += 1
        return TagBlock(tags, _strip_blank_edges(code_lines), first, key_lines)
    return TagBlock(tags, _strip_blank_edges(before), _first_nonblank(before), key_lines)


def _first_nonblank(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        if line.strip():
            return i + 1
    return 1


def _strip_blank_edges(lines: list[str]) -> str:
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = len(lines)
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def timeout_problem(value: object) -> str | None:
    """Why ``value`` cannot be a timeout in seconds, or ``None`` if it can.

    A timeout must be a real number (not a bool), finite, greater than 0 and
    at most :data:`MAX_TIMEOUT`: ``nan``, ``inf`` or ``1e308`` would leave a
    run without any limit.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"expected a number, got {type(value).__name__}"
    if not math.isfinite(value):
        return "must be a finite number of seconds"
    if value <= 0:
        return "must be positive"
    if value > MAX_TIMEOUT:
        return f"must be at most {MAX_TIMEOUT:g} seconds (24 h)"
    return None


def _expect_problem(expect: str) -> str | None:
    """Why a well-formed ``expect`` can never hold here (unknown signal, exit status > 255)."""
    kind, _, arg = expect.partition(" ")
    if kind == "signal" and arg not in signal.Signals.__members__:
        known = ", ".join(sorted(n for n in signal.Signals.__members__ if not n.startswith("SIG_")))
        return f"unknown signal {arg!r}; known signals are: {known}"
    if kind == "exit" and int(arg) > 255:
        return f"exit status {arg} is impossible: a process exits with 0 to 255"
    return None


def _names(key: str, value: object, where: int) -> list[str]:
    """A tag value that is a string or a list of non-empty strings, as a list."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise TagError(f"bad value for {key!r}: {value!r}; {KNOWN_KEYS[key]}", where)
    return [v.strip() for v in value]


def variable_problem(name: str) -> str | None:
    """Why ``name`` cannot be passed through to a run, or ``None`` if it can."""
    if not _VARIABLE_RE.match(name):
        return f"{name!r} is not an environment variable name (letters, digits and '_')"
    if name in FIXED_VARIABLES or name.startswith(FIXED_PREFIXES):
        return f"{name!r} is set by the runner for every run (a fixed environment) and cannot be passed through"
    return None


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot name data files in the project, or ``None`` if it can.

    A pattern is a relative POSIX path or glob (``data/table.csv``,
    ``data/*.json``, ``data/**/*.csv``) with no ``..`` segment.
    """
    if "\\" in pattern or pattern.startswith("/") or re.match(r"^[A-Za-z]:", pattern):
        return f"{pattern!r} must be a relative path with '/' separators, relative to the project root"
    if any(part in ("..", "") for part in pattern.rstrip("/").split("/")):
        return f"{pattern!r} must stay inside the project: no '..' and no empty segments"
    return None


def _toml(text: str, first_line: int) -> tuple[dict[str, Any], Callable[[str], int]]:
    """The tag block's TOML table of known keys, and the line of each key
    (the block's first for one it lacks)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's TOMLDecodeError has no lineno attribute: read "(at line N, ...)".
        m = re.search(r"at line (\d+)", str(exc))
        lineno = getattr(exc, "lineno", None) or (int(m.group(1)) if m else 1)
        raise TagError(f"tag block is not valid TOML: {exc}", first_line + lineno - 1) from None
    key_lines = _key_lines(text, first_line)
    for key in data:
        if key not in KNOWN_KEYS:
            known = ", ".join(sorted(KNOWN_KEYS))
            raise TagError(
                f"unknown tag {key!r}; known tags are: {known}", key_lines.get(key, first_line)
            )

    def where(key: str) -> int:
        return key_lines.get(key, first_line)

    return data, where


def _declared_inputs(data: dict[str, Any], where: Callable[[str], int], language: str) -> tuple[list[str], list[str]]:
    """The ``env`` and ``depends`` tags: variable names and file patterns (Python snippets only)."""
    env = _names("env", data.get("env", []), where("env"))
    depends = _names("depends", data.get("depends", []), where("depends"))
    if (env or depends) and language != "python":
        key = "env" if env else "depends"
        raise TagError(f"tag {key!r} is supported for Python snippets only", where(key))
    for name in env:
        why = variable_problem(name)
        if why:
            raise TagError(f"bad value for 'env': {why}", where("env"))
    for pattern in depends:
        why = pattern_problem(pattern)
        if why:
            raise TagError(f"bad value for 'depends': {why}", where("depends"))
    return env, depends


def _to_tags(text: str, first_line: int, language: str = "python") -> Tags:
    data, where = _toml(text, first_line)

    expect = data.get("expect", "ok")
    if not isinstance(expect, str) or not _EXPECT_RE.match(expect):
        raise TagError(f"bad value for 'expect': {expect!r}; {KNOWN_KEYS['expect']}", where("expect"))
    never = _expect_problem(expect)
    if never:
        raise TagError(f"bad value for 'expect': {expect!r}: {never}", where("expect"))
    requires = data.get("requires", [])
    if isinstance(requires, str):
        requires = [requires]
    if not isinstance(requires, list) or not all(
        isinstance(r, str) and r.strip() for r in requires
    ):
        raise TagError(f"bad value for 'requires': {requires!r}; {KNOWN_KEYS['requires']}", where("requires"))
    timeout = data.get("timeout")
    if timeout is not None and timeout_problem(timeout):
        raise TagError(f"bad value for 'timeout': {timeout!r}; {KNOWN_KEYS['timeout']}", where("timeout"))
    refutes = data.get("refutes")
    if refutes is not None and (not isinstance(refutes, str) or not refutes.strip()):
        raise TagError(f"bad value for 'refutes': {refutes!r}; {KNOWN_KEYS['refutes']}", where("refutes"))
    memory = data.get("memory")
    if memory is not None:
        try:
            memory = parse_size(memory)
        except ValueError:
            memory = 0
        if not memory:
            raise TagError(f"bad value for 'memory': {data['memory']!r}; {KNOWN_KEYS['memory']}", where("memory"))
    seed = data.get("seed")
    if seed is not None:
        why = seed_problem(seed, fresh_ok=True)
        if why:
            raise TagError(f"bad value for 'seed': {seed!r}; {KNOWN_KEYS['seed']}", where("seed"))
        if language != "python":
            raise TagError("tag 'seed' is supported for Python snippets only", where("seed"))
    output_limit = data.get("output-limit")
    if output_limit is not None and (
        isinstance(output_limit, bool) or not isinstance(output_limit, int) or output_limit <= 0
    ):
        raise TagError(
            f"bad value for 'output-limit': {output_limit!r}; {KNOWN_KEYS['output-limit']}", where("output-limit")
        )
    env, depends = _declared_inputs(data, where, language)
    return Tags(
        expect=expect,
        requires=tuple(r.strip() for r in requires),
        timeout=float(timeout) if timeout is not None else None,
        refutes=refutes,
        memory=memory,
        env=tuple(dict.fromkeys(env)),
        depends=tuple(dict.fromkeys(depends)),
        seed=seed,
        output_limit=output_limit,
    )


def seed_problem(value: object, *, fresh_ok: bool) -> str | None:
    """Why ``value`` is not a seed (a whole number from 0 to :data:`MAX_SEED`,
    or ``"fresh"`` where ``fresh_ok``), or ``None``."""
    if fresh_ok and value == FRESH:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        return f"expected a whole number from 0 to {MAX_SEED}" + (' or "fresh"' if fresh_ok else "")
    return None


def resolved_seed(tags: Tags, default: int | None) -> int | None:
    """The seed a run of a snippet with ``tags`` uses: its ``seed`` tag, else
    ``default`` (``snipcheck_seed``); ``None`` for fresh randomness."""
    seed = tags.seed if tags.seed is not None else default
    return None if seed == FRESH else seed  # type: ignore[return-value]


def _key_lines(text: str, first_line: int) -> dict[str, int]:
    found: dict[str, int] = {}
    for i, line in enumerate(text.splitlines()):
        m = re.match(r"\s*([A-Za-z0-9_-]+)\s*=", line)
        if m:
            found.setdefault(m.group(1), first_line + i)
    return found


def render(tags: Tags, language: str = "python") -> str:
    """Write ``tags`` as a tag block (used by the scaffolding command).

    :return: the block's lines joined with ``\\n``, without a final newline;
        empty when every tag has its default value.
    """
    marker = _COMMENT[language]
    body = []
    if tags.expect != "ok":
        body.append(f'expect = "{tags.expect}"')
    if tags.requires:
        body.append("requires = [" + ", ".join(f'"{r}"' for r in tags.requires) + "]")
    if tags.timeout is not None:
        body.append(f"timeout = {tags.timeout:g}")
    if tags.refutes is not None:
        body.append(f"refutes = {_toml_str(tags.refutes)}")
    if tags.memory is not None:
        body.append(f"memory = {tags.memory}")
    if tags.env:
        body.append("env = [" + ", ".join(_toml_str(n) for n in tags.env) + "]")
    if tags.depends:
        body.append("depends = [" + ", ".join(_toml_str(d) for d in tags.depends) + "]")
    if tags.seed is not None:
        body.append(f"seed = {_toml_str(tags.seed) if isinstance(tags.seed, str) else tags.seed}")
    if tags.output_limit is not None:
        body.append(f"output-limit = {tags.output_limit}")
    if not body:
        return ""
    return "\n".join([f"{marker} /// snipcheck", *(f"{marker} {b}" for b in body), f"{marker} ///"])


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
