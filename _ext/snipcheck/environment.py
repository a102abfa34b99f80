"""Probe the interpreter that runs snippets: Python, torch build, CUDA, platform.

The quick probe asks the interpreter for its version, platform and torch's
``__version__`` with its build suffix (``2.13.0+cpu``, ``2.14.1+cu130``), read
from ``torch/version.py`` without importing torch (the distribution's metadata
can lack the suffix; then it is the fallback).  Only the device needs torch itself, and only where a GPU could be
used: a ``+cpu`` build, or a machine without GPU device nodes, is CPU without
asking.  Otherwise the full probe imports torch (2–3 s); its answer is kept
in the cache directory, keyed by the quick probe, so a new torch wheel always
gets a fresh probe.

Pure core: standard library and :mod:`snipcheck.model` only.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

from .model import Stamp

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
print(json.dumps({"executable": sys.executable, "python": platform.python_version(),
                  "platform": f"{platform.system()} {platform.machine()}", "torch": torch}))
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


def probe(python: str, cache_dir: Path | None = None, timeout: float = 120.0) -> Stamp:
    """Return the :class:`~snipcheck.model.Stamp` of ``python``.

    :param python: interpreter path or command name.
    :param cache_dir: where to keep full-probe answers; ``None`` disables it.
    :param timeout: seconds allowed for each probe process.
    :raises ProbeError: if the interpreter cannot run the probe.
    """
    quick = _run(python, _QUICK, timeout)
    key = hashlib.sha256(
        json.dumps([quick, socket.gethostname(), os.environ.get("CUDA_VISIBLE_DEVICES")]).encode()
    ).hexdigest()[:24]
    path = cache_dir / "probes" / f"{key}.json" if cache_dir else None
    if path is not None and path.is_file():
        try:
            return Stamp(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            pass  # a damaged probe entry is simply redone
    if quick.get("torch") and not _cpu_only(quick["torch"]):
        full = _run(python, _FULL, timeout)
    else:
        full = {"python": quick["python"], "platform": quick["platform"], "torch": quick.get("torch"), "device": "CPU"}
    stamp = Stamp(python=full["python"], torch=full["torch"], device=full["device"], platform=full["platform"])
    if path is not None:
        from .cache import write_atomic

        write_atomic(path, json.dumps(stamp.__dict__).encode("utf-8"))
    return stamp


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


def _run(python: str, code: str, timeout: float) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONIOENCODING"] = "utf-8"
    try:
        out = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, timeout=timeout, env=env, check=False
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
