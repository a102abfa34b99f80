"""How a new stated output becomes a notebook cell's outputs (snipcheck.pending.notebook_write).

The run captured one terminal text; Jupyter keeps stdout, stderr and a shown
value apart.  The stored structure is kept and only text replaced, line by
line; what each case writes must state exactly the new text again
(``stated_text``, the build's own reading of outputs).
"""

from __future__ import annotations

import json
from typing import Any

import nbformat
import pytest
from notebook_support import executed
from snipcheck.pending.notebook_write import new_outputs, output_spans, stated_form
from snipcheck.sources.notebook import stated_text


def stream(name: str, text: str) -> dict[str, Any]:
    return {"name": name, "output_type": "stream", "text": text.splitlines(True)}


def shown(text: str, **other: str) -> dict[str, Any]:
    data = {"text/plain": text.splitlines(True), **other}
    return {"data": data, "execution_count": 4, "metadata": {}, "output_type": "execute_result"}


def _valid(outputs: list[dict[str, Any]]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x", id="c"))
    nb.cells[0].outputs = [nbformat.from_dict(o) for o in outputs]
    nbformat.validate(nb)


@pytest.mark.parametrize(
    ("old", "body", "new"),
    [
        # each changed line stays in the output of the line it replaces
        ([stream("stdout", "out\n"), stream("stderr", "err\n"), shown("20")], "out\nERR\n21",
         [stream("stdout", "out\n"), stream("stderr", "ERR\n"), shown("21")]),
        # a line no longer printed leaves its output, which goes
        ([stream("stdout", "a\n"), stream("stderr", "warn\n"), stream("stdout", "b\n")], "a\nb",
         [stream("stdout", "a\n"), stream("stdout", "b\n")]),
        # a new line goes with the line before it
        ([stream("stdout", "a\n"), shown("1")], "a\nb\n1", [stream("stdout", "a\nb\n"), shown("1")]),
        # no stored text: one stdout stream
        ([], "hello", [stream("stdout", "hello\n")]),
        # a stored text without a final line break gets none
        ([stream("stdout", "no newline")], "no Newline", [stream("stdout", "no Newline")]),
        # a value whose text changed keeps only its text/plain (the HTML showed the old value)
        ([shown("  a\n0  1", **{"text/html": "<table>1</table>"})], "  a\n0  2", [shown("  a\n0  2")]),
        # nothing printed any more: no output
        ([stream("stdout", "gone\n")], "", []),
    ],
)  # fmt: skip
def test_new_text_is_shared_out_keeping_the_stored_structure(
    old: list[dict[str, Any]], body: str, new: list[dict[str, Any]]
) -> None:
    written = new_outputs(json.loads(json.dumps(old)), body, raises=False)
    assert written == new
    assert stated_text(written)[0] == body
    _valid(written)


def test_an_unchanged_output_is_kept_as_stored_and_a_traceback_becomes_the_error_output() -> None:
    nb = executed([("e", "print('before')\nraise ValueError('old')", ["raises-exception"])])
    old = json.loads(json.dumps(nb.cells[1].outputs))
    body = "before\nTraceback (most recent call last):\n  File \"<cell>\", line 5, in <module>\nValueError: new"
    written = new_outputs(old, body, raises=True)
    assert written[0] is old[0]  # the stream, byte for byte
    assert written[1] == {
        "ename": "ValueError", "evalue": "new", "output_type": "error",
        "traceback": ["Traceback (most recent call last):", '  File "<cell>", line 5, in <module>', "ValueError: new"],
    }  # fmt: skip
    assert stated_text(written)[0] == stated_form(body, raises=True)
    _valid(written)
    same = "before\nTraceback (most recent call last):\n...\nValueError: old"
    assert new_outputs(old, same, raises=True) == old  # IPython's own traceback stays


def test_the_outputs_span_of_every_cell_is_found_in_any_writers_json() -> None:
    nb = executed([("a", "print(1)", []), ("b", "2", [])])
    nb.cells.append(nbformat.v4.new_markdown_cell('"outputs": [] in a string'))
    for text in (
        nbformat.writes(nb),
        json.dumps(nb, indent=2, ensure_ascii=True).replace("\n", "\r\n"),
        json.dumps(nb, separators=(",", ":")),
    ):
        found = [json.loads(text[span[0] : span[1]]) if span else None for span in output_spans(text)]
        assert found == [c.get("outputs") for c in json.loads(text)["cells"]]
        assert found[1] and found[2] and found[3] is None


def test_a_chained_exception_is_one_error_output_as_ipython_stores_it() -> None:
    nb = executed([("e", "try:\n    {}['k']\nexcept KeyError:\n    raise ValueError('v')", ["raises-exception"])])
    old = json.loads(json.dumps(nb.cells[1].outputs))
    assert [o["output_type"] for o in old] == ["error"]
    body = (
        "Traceback (most recent call last):\n  File \"<cell>\", line 2, in <module>\nKeyError: 'k'\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n  File \"<cell>\", line 4, in <module>\nValueError: w"
    )
    (error,) = new_outputs(old, body, raises=True)
    assert (error["ename"], error["evalue"]) == ("ValueError", "w")
    assert error["traceback"][0] == "Traceback (most recent call last):" and "KeyError: 'k'" in error["traceback"]
    assert stated_text([error])[0] == "Traceback (most recent call last):\n...\nValueError: w"
