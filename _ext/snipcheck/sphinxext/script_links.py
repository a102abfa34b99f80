"""Links into and out of a placed script, as under sphinx-gallery.

* **Labels**: sphinx-gallery labels each example's page
  ``sphx_glr_<gallery dir>_<file>.py``; a placed script gets the label
  ``sphx_glr_<script id, "/" as "_">.py`` (``gallery/plot_x`` →
  ``sphx_glr_gallery_plot_x.py``), at its first heading.  A reference to
  another ``sphx_glr_…`` label (a page moved from sphinx-gallery, whose
  gallery folder had another name) resolves to the one placed script whose
  file it names; where none or several do, the warning says which label to
  write instead (:func:`resolve`).
* **Relative paths** in the script's prose (``:download:`data.csv```, an
  ``image``) name files beside the script, as in sphinx-gallery's copy of it;
  they are rewritten relative to the page that places it (:func:`rebase`).

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes

from snipcheck.sphinxext import index
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

PREFIX = "sphx_glr_"


def label_for(script_id: str) -> str:
    """The sphinx-gallery-style label of a placed script."""
    return f"{PREFIX}{script_id.replace('/', '_')}.py"


def target(document: nodes.document, script_id: str) -> nodes.target:
    """An explicit target with :func:`label_for`'s name, to stand before the script's nodes."""
    node = nodes.target("", "")
    node["names"].append(label_for(script_id))
    document.note_explicit_target(node, node)
    return node


def rebase(parsed: list[nodes.Node], script: Path, page: Path) -> None:
    """Rewrite relative paths in the script's prose (downloads, images) that
    name a file beside the script, and none beside the page, relative to the page."""
    for top in parsed:
        if not isinstance(top, nodes.Element):
            continue
        for node in top.findall(nodes.Element):
            key = "reftarget" if isinstance(node, addnodes.download_reference) else "uri" if isinstance(node, nodes.image) else ""
            value = str(node.get(key, "")) if key else ""
            if not value or value.startswith(("/", "data:")) or "://" in value:
                continue
            beside = script.parent / value
            if beside.exists() and not (page.parent / value).exists():
                node[key] = os.path.relpath(beside, page.parent).replace(os.sep, "/")


def _placed_scripts(env: BuildEnvironment) -> set[str]:
    """The ids of the scripts placed in the project (from their cells' code)."""
    return {b.snippet_id.rpartition("/")[0] for found in index.code_blocks(env).values() for b in found if b.script_cell}


def resolve(app: Sphinx, env: BuildEnvironment, node: addnodes.pending_xref, contnode: nodes.Element) -> Any:
    """``missing-reference``: a ``sphx_glr_…`` label no script has."""
    wanted = str(node.get("reftarget", ""))
    if node.get("refdomain") != "std" or node.get("reftype") not in ("ref", "doc") or not wanted.startswith(PREFIX):
        return None
    scripts = sorted(_placed_scripts(env))
    tail = wanted[len(PREFIX) :]
    found = [s for s in scripts if tail == f"{s.replace('/', '_')}.py" or tail.endswith(f"_{s.rpartition('/')[2]}.py")
             or tail == f"{s.rpartition('/')[2]}.py"]  # fmt: skip
    if len(found) == 1:
        std = env.domains.standard_domain
        return std.resolve_xref(env, node.get("refdoc", env.docname), app.builder, "ref", label_for(found[0]), node, contnode)
    choices = ", ".join(label_for(s) for s in (found or scripts)) or "none: no script is placed"
    warn(
        "missing",
        f"{wanted!r} is a sphinx-gallery label, and {'several' if found else 'no'} placed script "
        f"{'match' if found else 'matches'} it; write one of these labels instead: {choices}",
        node,
    )
    return contnode


def register(app: Sphinx) -> None:
    app.connect("missing-reference", resolve)
