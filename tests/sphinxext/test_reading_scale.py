"""A page of many snippets reads in time linear in its size (issue 33 §8).

No timing is asserted here (the benchmark measures it: ``tests/benchmark.py
--one-page``); these tests count the per-snippet steps that were quadratic:
each snippet's placement compared the whole page's text with what Sphinx
read (four splits of the page a snippet), and each judged record was found
by a scan of its page's records.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from snipcheck.sphinxext import collector
from snipcheck.sphinxext import index as index_mod
from snipcheck.sphinxext.collector import SnippetRecord
from snipcheck.app.index_reader import read_index


def one_page(root: Path, count: int, markup: str) -> Path:
    """A project with ``count`` snippets on one page, in ``markup``."""
    (root / "snippets" / "s").mkdir(parents=True)
    (root / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\n')
    body = ["Page", "====", ""]
    for i in range(count):
        (root / "snippets" / "s" / f"n{i}.py").write_text(f"print({i})\n")
        if markup == "rst":
            body += [f".. snippet:: s/n{i}", "", f"   {i}", ""]
        else:
            body += [f"```{{snippet}} s/n{i}", f"{i}", "```", ""]
    (root / ("index.rst" if markup == "rst" else "index.md")).write_text("\n".join(body))
    return root


@pytest.mark.parametrize("markup", ["rst", "myst"])
def test_a_pages_text_is_compared_a_fixed_number_of_times_whatever_its_snippets(
    markup: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each placement checks that the file is still the text Sphinx read and
    parsed; the page's lines are worked out once per read, not once a snippet."""
    calls: list[int] = []
    real = index_mod._lines

    def counted(text: str) -> list[str]:
        calls.append(1)
        return real(text)

    monkeypatch.setattr(index_mod, "_lines", counted)
    counts = {}
    for n in (10, 40):
        root = one_page(tmp_path / f"{markup}-{n}", n, markup)
        calls.clear()
        found = read_index(root, root, tmp_path / f"doctrees-{markup}-{n}").placements
        assert len(found) == n and all(p.writable == "" for p in found), [p.writable for p in found][:3]
        counts[n] = len(calls)
    assert counts[10] == counts[40] <= 4, counts


class _Counted(list):  # type: ignore[type-arg]
    """A page's records that count how many of them are looked at."""

    visits = 0

    def __iter__(self) -> Any:
        for item in super().__iter__():
            _Counted.visits += 1
            yield item

    def __getitem__(self, i: Any) -> Any:
        _Counted.visits += 1
        return super().__getitem__(i)


def test_judging_a_pages_records_looks_at_each_a_fixed_number_of_times() -> None:
    """The build replaces each pending record by its judged one: with a scan
    of the page's records each time, N records cost N²/2 looks."""
    n = 400
    recs = _Counted(SnippetRecord("page", i, f"s/{i}", "pending", "none", serial=i) for i in range(n))
    env: Any = SimpleNamespace(snipcheck_records={"page": recs})
    _Counted.visits = 0
    for i in reversed(range(n)):
        collector.replace(env, SnippetRecord("page", i, f"s/{i}", "ok", "run", serial=i))
    assert [r.status for r in list.__iter__(recs)] == ["ok"] * n
    assert _Counted.visits <= 3 * n, _Counted.visits
    # a record of a placement not there yet is added, and found after
    collector.replace(env, SnippetRecord("page", 0, "s/new", "pending", "none", serial=n))
    collector.replace(env, SnippetRecord("page", 0, "s/new", "ok", "run", serial=n))
    assert [(r.serial, r.status) for r in list.__iter__(recs)][-2:] == [(n - 1, "ok"), (n, "ok")]
    assert len(recs) == n + 1
    # a list changed behind its back (another build's records) is not trusted
    env.snipcheck_records["page"] = _Counted(list.__iter__(recs))
    list.reverse(env.snipcheck_records["page"])
    collector.replace(env, SnippetRecord("page", 0, "s/0", "drift", "run", serial=0))
    assert [r.status for r in list.__iter__(env.snipcheck_records["page"]) if r.serial == 0] == ["drift"]
