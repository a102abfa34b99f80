"""``python -m snipcheck new ID``: create a snippet file and print its directive.

The new file holds a small starting point and, when the snippet needs tags, a
tag block at its end (so the page's line numbers match the file's).  Nothing
is ever overwritten: an existing file is reported and left alone.

Pure core: standard library and snipcheck's core modules.
"""

from __future__ import annotations

import sys

from . import tags as tags_mod
from .model import Tags
from .requirements import RequirementError, check
from .settings import Settings
from .snippets import SUFFIXES, SnippetError, check_id

PYTHON = """import torch

x = torch.tensor([1.0, 2.0])
print("x =", x.tolist(), "version", x._version)
"""

RUST = """fn main() {
    let v = vec![1.0f32, 2.0];
    println!("v = {:?}", v);
}
"""


def new(settings: Settings, snippet_id: str, *, rust: bool, expect: str, requires: list[str]) -> int:
    """Create ``snippets/<id>.py`` (or ``.rs``) and print the directive to paste.

    :return: exit status: 0 when created, 1 when the file exists or the id,
        tags or requirements are invalid (the message says which).
    """
    try:
        check_id(snippet_id)
        for req in requires:
            check(req, settings.provides)
    except (SnippetError, RequirementError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    language = "rust" if rust else "python"
    suffix = next(s for s, lang in SUFFIXES.items() if lang == language)
    path = settings.snippets_dir / f"{snippet_id}{suffix}"
    others = [settings.snippets_dir / f"{snippet_id}{s}" for s in SUFFIXES]
    existing = [p for p in others if p.exists()]
    if existing:
        print(f"error: {existing[0]} already exists; choose another id (nothing was written)", file=sys.stderr)
        return 1
    block = tags_mod.render(Tags(expect=expect, requires=tuple(requires)), language)
    try:
        tags_mod.parse(block or "", language)
    except tags_mod.TagError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    text = (RUST if rust else PYTHON) + (f"\n{block}\n" if block else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8") as f:  # "x": never overwrite
        f.write(text)
    shown = path.relative_to(settings.root) if path.is_relative_to(settings.root) else path
    print(f"created {shown}")
    print("paste this into a page under docs/ where the code belongs:\n")
    print(f"```{{snippet}} {snippet_id}\n```\n")
    print(f"then fill in its output from a real run:  nox -s record -- {snippet_id}")
    print("and preview the page while you edit:       nox -s docs-live")
    return 0
