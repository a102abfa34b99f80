"""Find an output that varies before ``record``, ``accept`` or ``review`` writes it.

An output about to be written must come out the same on the next build, and
must be what plain ``python snippets/<id>.py`` prints.  Two things make it
vary where one build cannot see it:

* the run itself (a time, an address, unseeded randomness);
* the hash seed: every build run has the same hash secret
  (``DIFFERENCES["hash seed"]``), where plain python picks one at random per
  run, so the order of a set of strings, or ``hash()`` itself, is fixed in the
  build and varies for the reader.

:class:`Rerun` runs each snippet to be written again, afresh, under each of
several other hash secrets (:data:`~snipcheck.run.python.OTHER_HASH_SEEDS`:
one is not enough, a set of two strings keeps its order under another seed
about one time in two), each in an executor of its own, all at once: on the
fork runner that is one more fork server per seed, started with that secret
(one start each per command, then a fork per run), never the build's, whose
secret is fixed.  Only when one of those runs prints otherwise does a run
under the build's secret tell the two causes apart (then the message says
which, and what to do).  Nothing here runs in a build.

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from snipcheck.engine.execute import Executor
from snipcheck.judge.compare import terminal_text, text_diff
from snipcheck.judge.normalize import Normalizer
from snipcheck.model import RunResult, Snippet
from snipcheck.run.python import HASH_SEED, OTHER_HASH_SEEDS
from snipcheck.sources.tags import resolved_seed

#: How :data:`VARIES` says to seed a snippet; how it says it of a notebook cell, which has no tag block.
TAG_SEED = "a seed = 0 line in its tag block (or snipcheck_seed = 0 in conf.py, for every snippet)"
NOTEBOOK_SEED = (
    'a "seed": 0 in the notebook\'s metadata table "snipcheck" (or snipcheck_seed = 0 in conf.py), or mark the '
    "cell NBVAL_IGNORE_OUTPUT to run it without comparing its output (a time, say)"
)
#: What to do about a run-to-run variation, and about a hash-order one.
VARIES = (
    "its output differs between two runs of the same code, so any recording would drift on the next build; "
    f"make it deterministic: {TAG_SEED} seeds Python's random, numpy and torch before it runs; do not print "
    "times, addresses or durations; or state the varying part with a wildcard ([..] within a line, ... for lines)"
)


def for_notebook(said: str) -> str:
    """A sentence that holds :data:`TAG_SEED` as it applies to a notebook cell (:data:`NOTEBOOK_SEED`)."""
    return said.replace(TAG_SEED, NOTEBOOK_SEED)


#: Said under a drift warning of an unseeded snippet that draws random numbers.
SEED_HINT = (
    "if it draws random numbers, its output changes from run to run: seed it with seed = 0 in its tag block "
    "(or snipcheck_seed = 0 in conf.py), then record it"
)
_RANDOM = re.compile(
    r"\brandom\b|\brand(?:n|int|perm|_like|n_like|int_like)?\(|\.(?:normal|uniform|bernoulli|exponential)_\("
    r"|\bmultinomial\(|\bdefault_rng\(|\bshuffle\(|\bdropout\b",
    re.IGNORECASE,
)


def seed_hint(snippet: Snippet, default_seed: int | None) -> str | None:
    """:data:`SEED_HINT` when ``snippet`` (or a helper it imports) seems to
    draw random numbers (a name like ``torch.randn``, ``random``,
    ``default_rng``, ``dropout``) and no seed is in force (its ``seed`` tag,
    else ``default_seed``, the ``snipcheck_seed`` config value); else ``None``."""
    if snippet.language != "python" or resolved_seed(snippet.tags, default_seed) is not None:
        return None
    text = snippet.source + "".join(source for _, source in snippet.helpers)
    return SEED_HINT if _RANDOM.search(text) else None
HASH_ORDER = (
    "its output depends on the hash seed: plain python hashes strings at random on every run, and under "
    "PYTHONHASHSEED={other} this prints otherwise than under the build's {seed} (the order of a set or dict "
    "of strings or bytes, or hash() itself); print it in an order of its own (sorted(...)), or state the "
    "varying part with a wildcard ([..] within a line, ... for lines)"
)


class Rerun:
    """Runs snippets again to find varying outputs (see the module docstring).

    :param executor: ``executor(hash_seed)`` makes an uncached executor whose
        Python runs get that hash secret (:meth:`snipcheck.settings.Settings.executor`).
    :param normalizers: the project's normalizers (outputs are compared after them).
    """

    def __init__(self, executor: Callable[[int], Executor], normalizers: Sequence[Normalizer]) -> None:
        self._make = executor
        self.normalizers = normalizers
        self._executors: dict[int, Executor] = {}

    def _executor(self, hash_seed: int) -> Executor:
        if hash_seed not in self._executors:
            self._executors[hash_seed] = self._make(hash_seed)
        return self._executors[hash_seed]

    def submit(self, snippets: Sequence[Snippet]) -> None:
        """Start the runs under the other seeds now (they run in parallel)."""
        for seed in OTHER_HASH_SEEDS:
            other = self._executor(seed)
            for snippet in snippets:
                other.submit(snippet)

    def other(self, snippet: Snippet) -> RunResult | None:
        """``snippet``'s run under the first other hash seed (``None``: it did not run)."""
        return self._executor(OTHER_HASH_SEEDS[0]).outcome(snippet).result

    def problem(self, snippet: Snippet, body: str, written: str = "first run") -> str:
        """Why ``body`` may not be written as ``snippet``'s stated output, or ``""``.

        :param body: the stated output to be written (wildcards kept).
        :param written: what ``body`` came from, for the diff's label.
        :return: a sentence saying what varies and what to do, then the diff.
        """
        self.submit([snippet])  # every seed's run at once (a snippet runs once per executor)
        for seed in OTHER_HASH_SEEDS:
            again = self._executor(seed).outcome(snippet).result
            diff = self._diff(body, again, written, f"a run under PYTHONHASHSEED={seed}")
            if diff:
                break
        else:
            return ""
        same = self._executor(HASH_SEED).outcome(snippet).result
        varies = self._diff(body, same, written, "a second run")
        if varies:
            return f"{VARIES}:\n{varies}"
        return HASH_ORDER.format(other=seed, seed=HASH_SEED) + f":\n{diff}"

    def _diff(self, body: str, again: RunResult | None, written: str, label: str) -> str:
        text = terminal_text(again, self.normalizers) if again is not None else ""
        return text_diff(body, text, self.normalizers, written, label)

    def close(self) -> None:
        """End the executors (their fork servers)."""
        for executor in self._executors.values():
            executor.close()
        self._executors.clear()
