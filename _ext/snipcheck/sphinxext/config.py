"""Register the ``snipcheck_*`` config values and validate them at ``config-inited``.

The values are declared once, in :data:`snipcheck.settings.VALUES`.  An invalid
value is replaced by its default with a ``snipcheck.config`` warning that names
the value, what was wrong and the default used; the build carries on.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..settings import VALUES, problem
from .log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config


def register(app: Sphinx) -> None:
    """Declare the config values and connect :func:`validate` to ``config-inited``."""
    for name, value in VALUES.items():
        app.add_config_value(
            name, value.default, value.rebuild, value.types, description=value.help  # type: ignore[arg-type]
        )
    app.connect("config-inited", validate)


def validate(app: Sphinx, config: Config) -> None:
    """Check every ``snipcheck_*`` value; fall back to the default on error."""
    conf_py = str(Path(app.confdir) / "conf.py")
    for name, value in VALUES.items():
        current = getattr(config, name)
        why = problem(name, current)
        if why:
            default = "the interpreter running Sphinx" if name == "snipcheck_python" else repr(value.default)
            # no location: the environment does not exist yet at config-inited
            warn("config", f"{conf_py}: invalid {name} = {current!r}: {why}; using the default, {default}", None)
            setattr(config, name, value.default)
