"""Re-read a page when something its snippets read changes, besides their own files.

Sphinx re-reads a page when one of its files changes; a snippet's output also
depends on things Sphinx does not watch.  :func:`note`, called by the snippet
directive for each snippet it places, records them for the page:

* its helper modules and declared data files (``depends``): Sphinx
  dependencies (``env.note_dependency``);
* its ``depends`` patterns with the files they matched, so that a new file
  matching a glob counts as a change;
* the values of its declared variables (``env``).

:class:`DependencyCollector` (``env-get-outdated``) re-reads every page whose
recorded values or matches differ now, and every page with snippets when the
build's environment changed: the fingerprint of the snippet interpreter (a new
numpy, another ``PATH``, see :mod:`snipcheck.run.fingerprint`), the project-wide
declarations (``snipcheck_env``, ``snipcheck_depends``) or the runner's version
(:data:`snipcheck.engine.cache.RUNNER_VERSION`: a runner that reads the same run's
output otherwise, which the pickled environment's results do not show).  The re-read reruns
exactly the snippets whose cache keys changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from sphinx.environment.collectors import EnvironmentCollector

from snipcheck.engine import cache
from snipcheck.model import Snippet
from snipcheck.sources import inputs
from snipcheck.sources.snippets import source_of
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.collector import records

if TYPE_CHECKING:
    from docutils import nodes
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment


def _watched(env: BuildEnvironment) -> dict[str, list[tuple[str, Any]]]:
    """``env.snipcheck_inputs``: docname → ``[("env", {name: value}) | ("depends", (patterns, files))]``."""
    if not hasattr(env, "snipcheck_inputs"):
        env.snipcheck_inputs = {}  # type: ignore[attr-defined]
    return env.snipcheck_inputs  # type: ignore[attr-defined,no-any-return]


def note(env: BuildEnvironment, snippet: Snippet) -> None:
    """Record what ``snippet``, placed in the current document, reads besides its file."""
    state = state_mod.for_env(env)
    settings = state.settings
    for shown, _ in snippet.helpers:  # a helper module it may import changes its output too
        env.note_dependency(str(source_of(shown, settings.snippets_dir, settings.root)))
    for _, path in snippet.files:
        env.note_dependency(path)
    watched = _watched(env).setdefault(env.docname, [])
    if snippet.tags.depends:
        watched.append(("depends", (list(snippet.tags.depends), [rel for rel, _ in snippet.files])))
    if snippet.env:
        watched.append(("env", inputs.values(snippet.env)))


def build_inputs(app: Sphinx) -> str | None:
    """A digest of what every Python snippet of this build reads: the
    environment fingerprint, the project-wide declarations and the runner's
    version; ``None`` when snippets do not run."""
    state = state_mod.get(app)
    if state.fingerprint is None or not state.execute:
        return None
    digest = inputs.Digests()
    files = [[rel, digest(path)] for rel, path in state.settings.declared_files()]
    payload = [state.fingerprint.digest, inputs.values(state.settings.env), files, cache.RUNNER_VERSION]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


class DependencyCollector(EnvironmentCollector):
    """Keeps the recorded inputs per document and decides which documents
    they make outdated (see the module docstring)."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        _watched(env).pop(docname, None)

    def merge_other(
        self, app: Sphinx, env: BuildEnvironment, docnames: AbstractSet[str], other: BuildEnvironment
    ) -> None:
        theirs = _watched(other)
        for docname in docnames:
            if docname in theirs:
                _watched(env)[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        pass  # recorded by the directive, through note()

    def get_outdated_docs(
        self,
        app: Sphinx,
        env: BuildEnvironment,
        added: AbstractSet[str],
        changed: AbstractSet[str],
        removed: AbstractSet[str],
    ) -> list[str]:
        current = build_inputs(app)
        previous = getattr(env, "snipcheck_build_inputs", None)
        if current is not None:
            env.snipcheck_build_inputs = current  # type: ignore[attr-defined]
        outdated: set[str] = set()
        if current is not None and previous is not None and current != previous:
            outdated |= set(records(env))
        root = state_mod.get(app).settings.root
        for docname, watched in _watched(env).items():
            for kind, data in watched:
                if kind == "env" and inputs.values(data) != data:
                    outdated.add(docname)
                elif kind == "depends":
                    patterns, files = data
                    try:
                        now = [rel for rel, _ in inputs.resolve(patterns, root)]
                    except inputs.InputError:
                        now = None
                    if now != files:
                        outdated.add(docname)
        return sorted(outdated - set(removed))


def register(app: Sphinx) -> None:
    app.add_env_collector(DependencyCollector)
