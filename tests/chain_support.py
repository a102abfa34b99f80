"""Chains of cells loaded from a folder, and the executor that runs them:
shared by the chain tests (``engine/test_chains.py``, ``run/test_chain_end.py``,
``run/test_chain_forge.py``, ``run/test_raw_bytes.py``, ``run/test_faults_runner.py``).

Not a test module: test modules import it, never each other.  Imports
snipcheck's engine, sources and model only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from snipcheck.engine.cache import ResultCache
from snipcheck.engine.execute import Executor, ExecutorConfig
from snipcheck.model import Snippet, Stamp
from snipcheck.sources.chains import attach
from snipcheck.sources.snippets import load

#: The runner kinds a chain runs under.
KINDS = ["subprocess", "fork"]


def cells(root: Path, sources: dict[str, str], chain: str = "page:demo") -> list[Snippet]:
    """Load ``sources`` (id -> code) as the cells of one chain, in order."""
    for snippet_id, code in sources.items():
        path = root / "snippets" / f"{snippet_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    loaded = [load(i, root / "snippets", root) for i in sources]
    linked = attach(("page", chain.split(":", 1)[1], s) for s in loaded)
    assert all(isinstance(s, Snippet) for s in linked)
    return linked  # type: ignore[return-value]


def executor(stamp: Stamp, cache: Path, kind: str = "subprocess") -> Executor:
    """An executor of ``kind``'s runner with its result cache in ``cache`` (two jobs, no preload)."""
    return Executor(ExecutorConfig(python=sys.executable, stamp=stamp, cache=ResultCache(cache), runner=kind,
                                   preload=(), fork_min_runs=0, jobs=2))  # fmt: skip
