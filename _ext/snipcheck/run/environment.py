"""Probe the interpreter that runs snippets: Python, torch build, CUDA, platform, fingerprint.

The quick probe runs the interpreter once under the snippets' fixed
environment (:func:`snipcheck.run.python.child_environment`) and asks for
its version, platform, ``sys.path`` as a snippet sees it, and torch's
``__version__`` with its build suffix (``2.13.0+cpu``, ``2.14.1+cu130``), read
from ``torch/version.py`` without importing torch (the distribution's metadata
can lack the suffix; then it is the fallback).  Its answer is kept in the cache
directory (``probes/quick-*.json``), keyed by what can change it: the
interpreter file (and a wrapper script or ``pyvenv.cfg`` in front of it) and
the environment it runs under; it is asked again as soon as an entry of the
stored ``sys.path`` changes (a distribution installed or removed, a ``.pth``
file edited).  So a build with nothing changed starts no process here.

The environment fingerprint (:mod:`snipcheck.run.fingerprint`) is then computed in
this process from that ``sys.path``, on every call: it lists the installed
distributions, so no stored answer can hide a new numpy.

Only the device needs torch itself, and only where a GPU could be used: a
``+cpu`` build, or a machine without GPU device nodes, is CPU without asking.
Otherwise the full probe imports torch (2–3 s); its answer is kept in the cache
directory, keyed by the quick probe, so a new torch wheel always gets a fresh
probe.

A cache directory that cannot be written costs the stored answers, never the
probe: the reason is returned in :attr:`Environment.notes`.

Pure core: standard library, :mod:`snipcheck.model`, :mod:`snipcheck.files`,
:mod:`snipcheck.run.fingerprint` and the runner's fixed environment.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snipcheck.files import write_atomic
from snipcheck.model import Stamp
from snipcheck.run import fingerprint as fingerprint_mod
from snipcheck.run.fingerprint import Fingerprint
from snipcheck.run.python import BOOTSTRAP_DIR, PASSTHROUGH, child_environment

_QUICK = r"""
import json, os, re, sys, platform
torch = None
try:
    import importlib.util
    spec = importlib.util.find_spec("torch")  # finds the package without running it
    if spec is not None and spec.submodule_search_locations:
        path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
        with open(path, encoding="utf-8") as f:
            m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read(), re.M)
        torch = m.group(1) if m else None
except Exception:
    pass
if torch is None:
    try:
        from importlib.metadata import version
        torch = version("torch")
    except Exception:
        torch = None
import site, sysconfig
stdlib = sorted({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")})
sites = list(getattr(site, "getsitepackages", list)())
if site.ENABLE_USER_SITE:
    sites.append(site.getusersitepackages())
print(json.dumps({"executable": sys.executable, "python": platform.python_version(),
                  "platform": f"{platform.system()} {platform.machine()}", "torch": torch,
                  "version": sys.version, "path": [p for p in sys.path if p], "stdlib": stdlib,
                  "sites": sites}))
"""

_FULL = r"""
import json, platform
info = {"python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}", "torch": None, "device": "CPU"}
try:
    import torch
except Exception:
    pass
else:
    info["torch"] = torch.__version__
    try:
        if torch.cuda.is_available():
            info["device"] = "CUDA (" + torch.cuda.get_device_name(0) + ")"
    except Exception:
        pass
print(json.dumps(info))
"""


class ProbeError(RuntimeError):
    """The interpreter could not be probed (missing, broken, or not Python)."""


#: Bump when the quick probe's answer changes form.
_QUICK_SCHEMA = 3


@dataclass(frozen=True)
class Environment:
    """What the probe found.

    :param stamp: the interpreter's stamp, its ``env`` set to the fingerprint id.
    :param fingerprint: the environment fingerprint (see :mod:`snipcheck.run.fingerprint`).
    :param notes: why a probe answer could not be stored in the cache
        directory (worth a ``snipcheck.cache`` warning), if it could not.
    """

    stamp: Stamp
    fingerprint: Fingerprint
    notes: tuple[str, ...] = ()


def probe(python: str, cache_dir: Path | None = None, timeout: float = 120.0) -> Stamp:
    """Return the :class:`~snipcheck.model.Stamp` of ``python``.

    The same as ``probe_environment(...).stamp``; see :func:`probe_environment`.
    """
    return probe_environment(python, cache_dir, timeout).stamp


def probe_environment(python: str, cache_dir: Path | None = None, timeout: float = 120.0) -> Environment:
    """Probe ``python``: its stamp and environment fingerprint (see the module docstring).

    :param python: interpreter path or command name.
    :param cache_dir: where to keep probe answers; ``None`` disables it.
    :param timeout: seconds allowed for each probe process.
    :raises ProbeError: if the interpreter cannot run the probe.
    """
    notes: list[str] = []
    quick, scans = _quick(python, cache_dir, timeout, notes)
    key = hashlib.sha256(
        json.dumps([quick, socket.gethostname(), os.environ.get("CUDA_VISIBLE_DEVICES")]).encode()
    ).hexdigest()[:24]
    path = cache_dir / "probes" / f"{key}.json" if cache_dir else None
    stamp = None
    if path is not None and path.is_file():
        try:
            stamp = Stamp(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            pass  # a damaged probe entry is simply redone
    if stamp is None:
        if quick.get("torch") and not _cpu_only(quick["torch"]):
            full = _run(python, _FULL, timeout)
        else:
            full = {"python": quick["python"], "platform": quick["platform"], "torch": quick.get("torch"), "device": "CPU"}
        stamp = Stamp(python=full["python"], torch=full["torch"], device=full["device"], platform=full["platform"])
        _store(path, {k: v for k, v in dataclasses.asdict(stamp).items() if k != "env"}, notes)
    env = child_environment("<run>")
    fingerprint = fingerprint_mod.compute(
        quick["executable"], quick["version"], scans, {name: env.get(name) for name in PASSTHROUGH}
    )
    return Environment(dataclasses.replace(stamp, env=fingerprint.id), fingerprint, tuple(notes))


def _identity(python: str) -> str:
    """A key that changes whenever the quick probe's answer could: the
    interpreter file, a wrapper or ``pyvenv.cfg`` in front of it, and the
    fixed environment (with its passed-through variables) it runs under."""
    exe = shutil.which(python) or python
    real = os.path.realpath(exe)
    files = [exe, real]
    for base in (os.path.dirname(exe), os.path.dirname(os.path.dirname(exe))):
        files.append(os.path.join(base, "pyvenv.cfg"))
    stats: list[Any] = []
    for f in files:
        try:
            st = os.stat(f)
            stats.append([f, st.st_mtime_ns, st.st_size, st.st_ino])
        except OSError:
            stats.append([f, None])
    payload = [_QUICK_SCHEMA, python, stats, sorted(child_environment("<run>").items())]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:24]


def _quick(
    python: str, cache_dir: Path | None, timeout: float, notes: list[str]
) -> tuple[dict[str, Any], tuple[fingerprint_mod.PathScan, ...]]:
    """The quick probe's answer (stored or asked afresh) and the scan of its ``sys.path``."""
    path = cache_dir / "probes" / f"quick-{_identity(python)}.json" if cache_dir else None
    if path is not None:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            answer, marks = stored["answer"], stored["marks"]
            scans = _scan(answer["path"], answer["stdlib"] + answer["sites"])
            if fingerprint_mod.marks(scans) == marks:
                return answer, scans
        except (OSError, ValueError, TypeError, KeyError):
            pass  # none yet, damaged, or out of date: ask again
    run_dir = tempfile.mkdtemp(prefix="snipcheck-probe-")
    try:
        answer = _run(python, _QUICK, timeout, env=child_environment(run_dir), cwd=run_dir)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    answer["path"] = [p for p in answer["path"] if not os.path.abspath(p).startswith(run_dir)]
    scans = _scan(answer["path"], answer["stdlib"] + answer["sites"])
    _store(path, {"answer": answer, "marks": fingerprint_mod.marks(scans)}, notes)
    return answer, scans


def _scan(paths: list[str], installed: list[str]) -> tuple[fingerprint_mod.PathScan, ...]:
    """The fingerprint scan of ``paths`` (``installed``: the interpreter's
    standard library and site folders, whose code is not signed),
    snipcheck's own bootstrap directory left out."""
    ours = os.path.abspath(BOOTSTRAP_DIR)
    return fingerprint_mod.scan((p for p in paths if os.path.abspath(p) != ours), installed)


def _store(path: Path | None, data: dict[str, Any], notes: list[str]) -> None:
    """Keep a probe answer; a cache directory that cannot be written costs a note."""
    if path is None:
        return
    try:
        write_atomic(path, json.dumps(data).encode("utf-8"))
    except OSError as exc:
        note = (
            f"cannot write to the cache directory {path.parent.parent} ({exc.strerror or exc}); "
            "snippets run without the cache"
        )
        if note not in notes:
            notes.append(note)


#: Device nodes through which torch can reach a GPU (NVIDIA, AMD ROCm).
GPU_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd")


def _cpu_only(torch_version: str) -> bool:
    """Whether a torch build certainly runs on the CPU here, without importing it."""
    if torch_version.endswith("+cpu"):
        return True
    return not any(os.path.exists(node) for node in GPU_NODES)


def rustc_version() -> str | None:
    """``rustc --version`` (e.g. ``"rustc 1.95.0"``), or ``None`` without rustc."""
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    try:
        out = subprocess.run([rustc, "--version"], capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return " ".join(out.stdout.split()[:2])


def host_platform() -> str:
    """This machine's platform in the probe's format, e.g. ``"Linux x86_64"``."""
    return f"{platform.system()} {platform.machine()}"


def _run(
    python: str, code: str, timeout: float, env: dict[str, str] | None = None, cwd: str | None = None
) -> dict[str, Any]:
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env["PYTHONIOENCODING"] = "utf-8"
    try:
        out = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ProbeError(f"cannot run interpreter {python!r}: {exc}") from None
    if out.returncode != 0:
        raise ProbeError(f"interpreter {python!r} failed the probe:\n{out.stderr.strip()}")
    try:
        answer: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
        return answer
    except (ValueError, IndexError):
        raise ProbeError(f"interpreter {python!r} printed no probe answer: {out.stdout!r}") from None
