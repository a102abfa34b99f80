"""Packaging (issue 12 §1; adoption.md #1, #2, #11): `python -m build` gives a
clean sdist and wheel that carry everything the extension needs and nothing
else, the core depends only on what it imports, and the wheel alone (no
myst-nb, no theme) builds an `.rst` page with ANSI colours under ``-W``.

The distributions (fixture ``dists``) and the fresh virtualenv holding the
wheel (``wheel_env``) come from tests/wheel_fixtures.py: they are built once
per session from a copy of the project in which junk is planted (bytecode, a
docs/_build page) and, until the project ships one, a locale catalog; the
tests check that the junk stays out and the catalog goes in.
"""

from __future__ import annotations

import ast
import email
import importlib.metadata
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from conftest import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from wheel_fixtures import pip

PACKAGE = REPO / "_ext" / "snipcheck"
CHAPTER_ONLY = {"myst-nb", "sphinx-design", "sphinx-copybutton", "furo", "jieba"}


def source_version() -> str:
    """``snipcheck.__version__`` as written in the source (the one version source, ``snipcheck/version.py``)."""
    tree = ast.parse((PACKAGE / "version.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__version__"]:
            return ast.literal_eval(node.value)
    raise AssertionError("no __version__ in snipcheck/version.py")


def package_files(project: Path) -> set[str]:
    """What the wheel must carry, relative to the package: its modules, static
    files, runner bootstrap, locale catalogs, report schemas and py.typed."""
    base = project / "_ext" / "snipcheck"
    wanted = set()
    for path in base.rglob("*"):
        rel = path.relative_to(base).as_posix()
        if not path.is_file() or "__pycache__" in rel:
            continue
        if path.suffix in {".py", ".po", ".mo"} or rel.startswith(("static/", "schemas/")) or rel == "py.typed":
            wanted.add(rel)
    return wanted


def test_the_wheel_carries_the_package_with_its_data_and_nothing_else(dists: dict[str, Path]) -> None:
    names = set(zipfile.ZipFile(dists["wheel"]).namelist())
    info = f"snipcheck-{source_version()}.dist-info/"
    inside = {n.removeprefix("snipcheck/") for n in names if n.startswith("snipcheck/")}
    wanted = package_files(dists["project"])
    assert {"py.typed", "static/snipcheck.css", "static/snipcheck-ansi.css", "run/bootstrap/forkserver.py"} <= wanted
    assert any(n.startswith("locale/") and n.endswith(".po") for n in wanted)
    assert any(n.startswith("locale/") and n.endswith(".mo") for n in wanted)
    assert inside == wanted
    assert {n for n in names if not n.startswith(("snipcheck/", info))} == set()
    # issue 35: this site's own features (_ext/snipcheck_chapter) stay out of the wheel, files and names alike
    chapter = {"reading.py", "reading_list.py", "search_zh.py", "cjk.py", "furo.py", "versions.py", "furo.po", "furo.mo",
               "snipcheck_chapter.po", "snipcheck_chapter.mo",
               "snipcheck-reading.css", "snipcheck-furo.css", "snipcheck-search.js"}  # fmt: skip
    assert not [n for n in names if n.startswith("snipcheck_chapter") or n.rpartition("/")[2] in chapter]
    assert f"{info}licenses/LICENSE" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "planted" in n]


def test_the_sdist_is_clean(dists: dict[str, Path]) -> None:
    with tarfile.open(dists["sdist"]) as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
    assert {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO"} <= names
    assert {f"_ext/snipcheck/{n}" for n in package_files(dists["project"])} <= names
    stray = [n for n in names if n.startswith(("tests/", "docs/", "snippets/", ".github/", "_build/", ".nox/"))]
    assert stray == []
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "planted" in n]


def metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


def requirements(meta: email.message.Message, extra: str | None = None) -> set[str]:
    """Names in Requires-Dist: the core set (``extra=None``) or one extra's."""
    names = set()
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        wanted = req.marker is None if extra is None else req.marker is not None and req.marker.evaluate({"extra": extra})
        if wanted:
            names.add(canonicalize_name(req.name))
    return names


def test_metadata_licence_version_and_a_lean_core(dists: dict[str, Path]) -> None:
    meta = metadata(dists["wheel"])
    assert meta["Version"] == source_version()
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["License"] is None  # the deprecated table form is gone
    core = requirements(meta)
    assert core & (CHAPTER_ONLY | {"myst-parser", "ipykernel"}) == set(), core
    assert {"sphinx", "filelock", "packaging", "jinja2"} <= core
    assert requirements(meta, "chapter") >= CHAPTER_ONLY
    assert "myst-parser" in requirements(meta, "myst")
    assert "pytest" in requirements(meta, "pytest") and "pytest" not in core


def third_party_imports() -> dict[str, set[str]]:
    """Top-level modules the package imports that are not its own or the standard library."""
    found: dict[str, set[str]] = {}
    # The runner's bootstrap modules import each other by their top-level
    # names (they run with their folder as sys.path[0]): they are ours too.
    own = {"snipcheck"} | {path.stem for path in (PACKAGE / "run" / "bootstrap").glob("*.py")}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in own:
                    found.setdefault(top, set()).add(path.relative_to(PACKAGE).as_posix())
    return found


#: Third-party modules a feature imports only when it is used, and the extra that brings each:
#: MyST prose of a jupytext script (myst), notebooks (notebook: myst-nb brings nbformat),
#: jupytext's light format (jupytext).
OPTIONAL = {
    "myst_parser": ("myst", "myst-parser"),
    "nbformat": ("notebook", "nbformat"),
    "myst_nb": ("notebook", "myst-nb"),  # a text notebook page is read with myst-nb's own reader
    "jupytext": ("jupytext", "jupytext"),
}


def top_level_imports() -> set[str]:
    """Top-level names the package imports at module level (not inside a function)."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def test_every_import_is_a_declared_core_dependency(dists: dict[str, Path]) -> None:
    core = requirements(metadata(dists["wheel"]))
    providers = importlib.metadata.packages_distributions()
    imports = third_party_imports()
    assert {"sphinx", "docutils", "jinja2", "filelock", "packaging"} <= set(imports)
    undeclared = {
        module: sorted(files)
        for module, files in imports.items()
        if not {canonicalize_name(d) for d in providers.get(module, [])} & core
        # the pytest plugin is loaded by pytest itself: where it runs, pytest is there
        and not (module == "pytest" and files == {"app/pytest_plugin.py"})
        and module not in OPTIONAL
    }
    assert undeclared == {}, f"imported but not in the core dependencies: {undeclared}"
    # what a feature needs only where it is used: imported inside a function, and in the extra named for it
    meta = metadata(dists["wheel"])
    for module, (extra, distribution) in OPTIONAL.items():
        assert module in imports, f"{module} is no longer imported: drop it from OPTIONAL"
        assert distribution in requirements(meta, extra), f"{module}: the {extra!r} extra does not name {distribution}"
        assert module not in top_level_imports(), f"{module} is imported at module level: the core would need it"


def test_the_wheel_installs_only_the_core(wheel_env: Path) -> None:
    check = pip(wheel_env, "check")
    assert check.returncode == 0, check.stdout
    listed = subprocess.run(
        [str(wheel_env), "-c", "import importlib.metadata as m; print(*sorted({d.metadata['Name'] for d in m.distributions()}))"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    names = {canonicalize_name(n) for n in listed} - {"pip", "setuptools", "wheel"}
    assert names & (CHAPTER_ONLY | {"myst-parser", "ipykernel", "jupyter-cache", "pyzmq"}) == set(), names
    # adoption.md #1: 79 packages with the chapter's dependencies; the core is about 25
    assert len(names) <= 30, sorted(names)


def test_the_wheel_alone_builds_an_rst_page_with_ansi_colours_under_W(wheel_env: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "snippets" / "ansi").mkdir(parents=True)
    (src / "conf.py").write_text('project = "outside"\nextensions = ["snipcheck"]\nsnipcheck_preload = []\n')
    (src / "snippets" / "ansi" / "colour.py").write_text('print("\\x1b[31mred\\x1b[0m and \\x1b[1;32mbold green\\x1b[0m")\n')
    (src / "index.rst").write_text("Outside\n=======\n\n.. snippet:: ansi/colour\n\n   red and bold green\n")
    out = tmp_path / "html"
    result = subprocess.run(
        [str(wheel_env), "-m", "sphinx", "-W", "--no-color", "-b", "html", str(src), str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lexer" not in result.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert '-Color-Red">red</span>' in page
    assert '-Color-Bold-Green">bold green</span>' in page
    assert "\x1b" not in page
    assert (out / "_static" / "snipcheck-ansi.css").is_file()
    assert "_static/snipcheck-ansi.css" in page


def test_the_chapter_conf_is_readable_without_the_chapter_extra(wheel_env: Path, tmp_path: Path) -> None:
    """`nox -s new` runs in an environment holding the project only (no torch,
    no chapter extra): the chapter's conf.py must load there."""
    shutil.copy2(REPO / "conf.py", tmp_path / "conf.py")
    (tmp_path / "snippets").mkdir()
    result = subprocess.run(
        [str(wheel_env.parent / "snipcheck"), "--root", str(tmp_path), "new", "demo/hello"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "snippets" / "demo" / "hello.py").is_file()
