"""Decide whether this build can run a snippet, from its ``requires`` tag.

Requirements are checked *before* running, never discovered by running: on a
machine without a GPU ``torch.cuda.max_memory_allocated()`` quietly returns 0,
so a snippet that needs CUDA must say so and is then not run here.

Known requirements:

``cuda``
    the snippet interpreter's torch sees a CUDA device (from the probe stamp);
``cargo``
    a Rust toolchain is on ``PATH``;
``torch<spec>``
    a version specifier on the torch build, e.g. ``torch>=2.14``;
any name in ``snipcheck_provides``
    a feature this build declares it has;
any name in ``snipcheck_requirements``
    a feature the project knows of, absent unless ``snipcheck_provides``
    names it (this chapter's ``burn``, which needs a crate registry a build
    machine may not reach): a snippet that requires it is not run here.

Pure core: standard library, :mod:`packaging`, :mod:`snipcheck.model`.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from snipcheck.model import Stamp

_TORCH_SPEC = re.compile(r"^torch\s*([<>=!~].*)$")


class RequirementError(ValueError):
    """A requirement that names nothing known (likely a typo)."""


def check(requirement: str, provides: Iterable[str] = (), known: Iterable[str] = ()) -> None:
    """Validate one requirement string.

    :param provides: features declared present (``snipcheck_provides``).
    :param known: features the project knows of, present or not
        (``snipcheck_requirements``).
    :raises RequirementError: for an unknown name or an invalid torch specifier.
    """
    m = _TORCH_SPEC.match(requirement)
    if m:
        try:
            SpecifierSet(m.group(1).replace(" ", ""))
        except InvalidSpecifier:
            raise RequirementError(f"invalid torch version specifier in {requirement!r}") from None
        return
    names = {"cuda", "cargo"} | set(known) | set(provides)
    if requirement not in names:
        raise RequirementError(
            f"unknown requirement {requirement!r}; known: {', '.join(sorted(names))}, "
            "or a torch version specifier such as 'torch>=2.14'; a feature of your own that this "
            "build lacks goes in snipcheck_requirements in conf.py (and in snipcheck_provides where it is present)"
        )


def missing(requires: Iterable[str], stamp: Stamp, provides: Iterable[str] = ()) -> tuple[str, ...]:
    """The requirements in ``requires`` that this build does not meet.

    :param stamp: the probe stamp of the snippet interpreter.
    :param provides: features declared present by ``snipcheck_provides``.
    """
    provided = set(provides)
    out = []
    for req in requires:
        if req in provided:
            continue
        m = _TORCH_SPEC.match(req)
        if m:
            if not _torch_satisfies(stamp.torch, m.group(1)):
                out.append(req)
        elif req == "cuda":
            if not stamp.cuda:
                out.append(req)
        elif req == "cargo":
            if shutil.which("cargo") is None:
                out.append(req)
        else:
            out.append(req)
    return tuple(out)


def why_unmet(requirement: str, stamp: Stamp | None, notes: Iterable[tuple[str, str]] = ()) -> str:
    """One clause saying what ``requirement`` is and why this build lacks it
    (``""`` when there is nothing to say).

    :param notes: the project's own sentences, ``snipcheck_requirements``
        given as a dict; they win over the built-in ones.
    """
    said = dict(notes)
    if requirement in said:
        return said[requirement]
    if requirement == "cuda":
        return (
            "the snippet interpreter's torch sees no CUDA device on this machine "
            "(a GPU machine runs them: snipcheck execute --provides cuda)"
        )
    if requirement == "cargo":
        return "no Rust toolchain (cargo) on PATH"
    if _TORCH_SPEC.match(requirement):
        found = stamp.torch if stamp is not None and stamp.torch else "no torch"
        return f"the snippet interpreter has {found}"
    return ""


def routed(
    requires: Iterable[str], stamp: Stamp, provides: Iterable[str] = (), known: Iterable[str] = ()
) -> tuple[str, ...]:
    """The requirements of ``requires`` that a sharded build routes to the
    shard started with ``--provides`` for them (see :mod:`snipcheck.shard.plan`).

    ``cuda`` and the project's own names (``known``, ``snipcheck_requirements``)
    are routed whether or not this machine meets them, so that every shard,
    a GPU machine's and a CPU one's, plans alike; unless configuration
    (``provides``, ``snipcheck_provides``, the same on every machine) provides
    them.  Any other requirement (``cargo``, a torch specifier) is routed only
    where this environment does not meet it, as :func:`missing` says.
    """
    provided = set(provides)
    always = {"cuda", *known}
    out = [r for r in requires if r not in provided and (r in always or missing((r,), stamp, provided))]
    return tuple(dict.fromkeys(out))


def _torch_satisfies(version: str | None, spec: str) -> bool:
    if version is None:
        return False
    try:
        return SpecifierSet(spec.replace(" ", "")).contains(Version(version).public, prereleases=True)
    except (InvalidVersion, InvalidSpecifier):
        return False
