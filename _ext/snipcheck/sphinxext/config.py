"""Register the ``snipcheck_*`` config values and validate them at ``config-inited``.

The values are declared once, in :data:`snipcheck.settings.VALUES`.  An invalid
value is replaced by its default with a ``snipcheck.config`` warning that names
the value, what was wrong and the default used; the build carries on.

Command-line overrides (``sphinx-build -D snipcheck_timeout=2``) arrive as
strings.  Sphinx converts a string by the type of the default, and refuses a
float default ("cannot override config setting ... unsupported type"), so each
declared value's own parser (:attr:`snipcheck.settings.Value.parse`) converts
them when the extension is set up, before Sphinx first reads the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from snipcheck.settings import VALUES, invalid, problem
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config


def register(app: Sphinx) -> None:
    """Declare the config values, convert their ``-D`` overrides and connect
    :func:`validate` to ``config-inited``."""
    for name, value in VALUES.items():
        app.add_config_value(
            name, value.default, value.rebuild, value.types, description=value.help  # type: ignore[arg-type]
        )
    convert_overrides(app.config)
    app.connect("config-inited", validate)
    app.connect("config-inited", own_source_suffix, priority=790)
    app.connect("config-inited", exclude_tool_folders)


#: Folders that tools write into a project and Sphinx must not read as pages:
#: pytest's cache (its ``README.md`` is a MyST document, and an orphan
#: warning fails a ``-W`` build), virtual environments and nox/tox ones
#: (every installed package's ``README``), npm's packages, other tools'
#: caches, and Jupyter's copies of notebooks (a second page of each).
TOOL_FOLDERS = (
    ".pytest_cache", ".nox", ".tox", ".venv", "node_modules",
    ".mypy_cache", ".ruff_cache", ".hypothesis", ".ipynb_checkpoints",
)  # fmt: skip


def exclude_tool_folders(app: Sphinx, config: Config) -> None:
    """Add each :data:`TOOL_FOLDERS` name, at the top of the source folder and
    below (``name`` and ``**/name``), to ``exclude_patterns``, each pattern
    the project does not list already (``config-inited``).

    Kept out by the extension, not by the tool that writes the folder:
    ``pytest --snipcheck`` is one of many writers (plain ``pytest``, nox,
    an editor's virtualenv), and only the build knows what it reads.  The
    same patterns on every build, so Sphinx sees no configuration change.
    """
    listed = set(config.exclude_patterns)
    # Both forms: Sphinx's ``**/name`` does not match a top-level ``name``.
    added = [pattern for name in TOOL_FOLDERS for pattern in (name, f"**/{name}") if pattern not in listed]
    if added:
        # A new list: the default one is shared by every application of the process.
        config.exclude_patterns = [*config.exclude_patterns, *added]


def own_source_suffix(app: Sphinx, config: Config) -> None:
    """Give a project that leaves ``source_suffix`` unset a dict of its own.

    Sphinx merges the suffixes extensions register (at ``config-inited``,
    priority 800) into the *shared* default dict (sphinx-doc/sphinx#11795), so
    the next application in the same process (a test run, the pytest plugin,
    ``record`` after a build) inherits, say, myst-nb's ``.md`` parser without
    loading myst-nb and fails with "Source parser for myst-nb not registered".
    Runs at priority 790, before the merge; a project's own value is kept.
    """
    from sphinx.config import Config as SphinxConfig

    shared = SphinxConfig.config_values["source_suffix"].default
    if config.source_suffix is shared:
        config.source_suffix = {".rst": "restructuredtext"}


def convert_overrides(config: Config) -> None:
    """Parse the string overrides (``-D name=text``) of snipcheck's values in place.

    Runs at extension set-up, when Sphinx holds the overrides unconverted.  A
    string that does not parse is dropped with a ``snipcheck.config`` warning;
    the value then comes from ``conf.py`` or the default.
    """
    overrides = config.overrides
    for name, text in list(overrides.items()):
        decl = VALUES.get(name)
        if decl is None or decl.parse is None or not isinstance(text, str):
            continue
        try:
            overrides[name] = decl.parse(text)
        except ValueError:
            del overrides[name]
            warn("config", f"-D {name}={text}: not a valid value ({decl.help}); ignored", None)


def validate(app: Sphinx, config: Config) -> None:
    """Check every ``snipcheck_*`` value; fall back to the default on error."""
    conf_py = str(Path(app.confdir) / "conf.py")
    for name, value in VALUES.items():
        current = getattr(config, name)
        why = problem(name, current, Path(app.confdir))
        if why:
            # no location: the environment does not exist yet at config-inited
            warn("config", f"{conf_py}: {invalid(name, current, why)}", None)
            setattr(config, name, value.default)
