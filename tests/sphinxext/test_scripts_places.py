"""A placed script's messages, links and files, at their true places (issue 36 §6).

Warnings about a script's prose name the script's file and line, in either
markup; ``:download:`` and images in the prose name files beside the script;
sphinx-gallery's ``sphx_glr_`` labels resolve, or say what to write instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import html
from faults_support import sphinx_build

CONF = 'extensions = ["myst_parser", "snipcheck"]\nexclude_patterns = ["_build"]\nsnipcheck_preload = []\n'

GALLERY = '''"""
A demo
======

Get :download:`the data <data.csv>` and see the next line.
"""

x = 1

# %%
# A role nobody knows: :nosuchrole:`here`.

print(x)
'''

NOTEBOOK = '''# %% [markdown]
# # A notebook
#
# Plain words.

# %%
print(2)

# %% [markdown]
# ```{nosuchdirective}
# ```
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / "snippets" / "gallery").mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    (root / "snippets" / "gallery" / "plot_demo.py").write_text(GALLERY)
    (root / "snippets" / "gallery" / "data.csv").write_text("a,b\n1,2\n")
    (root / "snippets" / "gallery" / "notebook.py").write_text(NOTEBOOK)
    (root / "index.rst").write_text(
        "Index\n=====\n\n.. toctree::\n\n   page\n\n"
        ".. snippet-script:: gallery/plot_demo\n\n   .. snippet:: gallery/plot_demo/1\n\n   .. snippet:: gallery/plot_demo/2\n\n      1\n"
    )
    (root / "page.md").write_text(
        "# Page\n\nSee {ref}`the demo <sphx_glr_auto_examples_plot_demo.py>`.\n\n"
        "````{snippet-script} gallery/notebook\n```{snippet} gallery/notebook/1\n2\n```\n````\n"
    )
    return root


def test_prose_warnings_name_the_script_and_its_line(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    built = sphinx_build(project, tmp_path, cache_dir)
    text = built.warnings_text
    gallery = project / "snippets" / "gallery" / "plot_demo.py"
    notebook = project / "snippets" / "gallery" / "notebook.py"
    assert f"{gallery}:11: ERROR: Unknown interpreted text role \"nosuchrole\"" in text, text
    assert f"{notebook}:10: WARNING: Unknown directive type: 'nosuchdirective'" in text, text
    assert "index.rst:1" not in text and "page.md:1" not in text


def test_a_download_beside_the_script_and_gallery_labels_resolve(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    (project / "snippets" / "gallery" / "plot_demo.py").write_text(GALLERY.replace(" :nosuchrole:`here`", " none"))
    (project / "snippets" / "gallery" / "notebook.py").write_text(NOTEBOOK.split("# %% [markdown]\n# ```")[0])
    built = sphinx_build(project, tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    index = html(built.outdir / "index.html")
    link = index.find("a", class_="download")
    assert link is not None and link["href"].endswith("/data.csv")
    assert (built.outdir / link["href"]).read_text() == "a,b\n1,2\n"
    page = html(built.outdir / "page.html")
    ref = page.find("a", string="the demo")
    assert ref is not None and ref["href"].startswith("index.html#")
    anchor = index.find(id=ref["href"].partition("#")[2])
    assert anchor is not None and anchor.find_parent("section").find("h2").get_text().startswith("A demo")


def test_a_gallery_label_no_script_has_says_what_to_write(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    (project / "page.md").write_text((project / "page.md").read_text().replace("auto_examples_plot_demo", "plot_other"))
    built = sphinx_build(project, tmp_path, cache_dir)
    (warning,) = [w for w in built.warnings if "sphx_glr_plot_other.py" in w]
    assert "page.md:3" in warning
    assert "write one of these labels instead: sphx_glr_gallery_notebook.py, sphx_glr_gallery_plot_demo.py" in warning


def test_a_module_beside_the_script_is_imported_and_keys_its_cells(tmp_path: Path, cache_dir: Path) -> None:
    """§3: ``from units import N`` finds ``units.py`` beside the script (and
    what it imports from there); editing it runs the cell again, with no
    declaration: the page is read again and the cell's result is not reused."""
    root = tmp_path / "m"
    (root / "snippets" / "gallery").mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    (root / "snippets" / "gallery" / "units.py").write_text("from base import N\n")
    (root / "snippets" / "gallery" / "base.py").write_text("N = 3\n")
    (root / "snippets" / "gallery" / "uses.py").write_text('"""\nUses\n====\n"""\nfrom units import N\nprint(N)\n')
    (root / "index.rst").write_text("I\n=\n\n.. snippet-script:: gallery/uses\n\n   .. snippet:: gallery/uses/1\n\n      3\n")
    first = sphinx_build(root, tmp_path / "one", cache_dir)
    assert first.statuscode == 0 and first.warnings == [], first.warnings_text
    (root / "snippets" / "gallery" / "base.py").write_text("N = 4\n")
    again = sphinx_build(root, tmp_path / "one", cache_dir)
    assert again.statuscode == 1
    (drift,) = again.about("gallery/uses/1")
    assert "[snipcheck.drift]" in drift and "+4" in drift


LOSE_AN_OUTPUT = '''
from docutils import nodes
from sphinx.transforms import SphinxTransform


class LoseAnOutput(SphinxTransform):
    """What a broken extension or theme might do: drop one cell's output."""

    default_priority = 500

    def apply(self):
        for node in list(self.document.findall(nodes.Element)):
            if "snippet-gallery-plot-demo-2" in node.get("ids", ()):
                node.parent.remove(node)


def setup(app):
    app.add_transform(LoseAnOutput)
'''


def test_a_page_that_lost_a_cell_s_output_fails_naming_script_and_cell(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    """§1: whatever removed it, a page that lacks a cell's output once read
    fails the build, naming the script, the cell and its line."""
    (project / "snippets" / "gallery" / "plot_demo.py").write_text(GALLERY.replace(" :nosuchrole:`here`", " none"))
    (project / "snippets" / "gallery" / "notebook.py").write_text(NOTEBOOK.split("# %% [markdown]\n# ```")[0])
    (project / "conf.py").write_text(CONF + "\nimport sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"
                                     "extensions.append('lose')\n")  # fmt: skip
    (project / "lose.py").write_text(LOSE_AN_OUTPUT)
    built = sphinx_build(project, tmp_path, cache_dir)
    assert built.statuscode == 1
    (warning,) = [w for w in built.warnings if "is missing from the page" in w]
    script = project / "snippets" / "gallery" / "plot_demo.py"
    assert f"{script}:13:" in warning
    assert "snippet-script 'gallery/plot_demo': the output of cell 'gallery/plot_demo/2' (line 13) is missing" in warning


REMOVED = """# %%
print("shown")

# %% tags=["remove-cell"]
print("secret setup")

# %% tags=["remove-input"]
print("output only")

# %% tags=["remove-output"]
print("hidden output")
"""


@pytest.mark.parametrize("secret", ["secret setup", "secret CHANGED"])
def test_remove_tags_leave_parts_of_a_cell_off_the_page_and_its_output_is_still_compared(
    tmp_path: Path, cache_dir: Path, secret: str
) -> None:
    """Found by a fresh user's try: jupytext's remove-cell, remove-input and
    remove-output tags (as myst-nb reads them) were ignored, and the page
    showed the setup the author removed."""
    root = tmp_path / "r"
    (root / "snippets" / "nbs").mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    (root / "snippets" / "nbs" / "intro.py").write_text(REMOVED)
    body = "".join(f"   .. snippet:: nbs/intro/{n}\n\n      {out}\n\n" for n, out in
                   [(1, "shown"), (2, secret), (3, "output only"), (4, "hidden output")])  # fmt: skip
    (root / "index.rst").write_text("I\n=\n\n.. snippet-script:: nbs/intro\n\n" + body)
    built = sphinx_build(root, tmp_path / "b", cache_dir)
    if secret != "secret setup":  # a removed cell's output is compared all the same
        assert built.statuscode == 1 and len(built.about("nbs/intro/2")) == 1, built.warnings_text
        return
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    text = html(built.outdir / "index.html").get_text()
    assert 'print("shown")' in text and "secret setup" not in text
    assert 'print("output only")' not in text and "output only" in text
    assert 'print("hidden output")' in text and "hidden output\n" not in text.replace('print("hidden output")', "")
