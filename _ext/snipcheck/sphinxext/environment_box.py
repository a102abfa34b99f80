"""The ``snipcheck-environment`` directive: where this page's outputs came from.

The directive leaves a placeholder node; :class:`FillEnvironmentBox`, a
post-transform, replaces it once every snippet of the page has been read, with
the interpreter stamp of this build, the reference environment the stated
outputs are for, and the page's counts (run and checked, from cache, not run
and why).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from snipcheck.report.display import visible
from snipcheck.sphinxext import render
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.collector import records
from snipcheck.sphinxext.i18n import _

if TYPE_CHECKING:
    from sphinx.application import Sphinx


class environment_box(nodes.General, nodes.Element):
    """Placeholder for the environment box, replaced before writing."""


class EnvironmentDirective(SphinxDirective):
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        return [environment_box()]


class FillEnvironmentBox(SphinxPostTransform):
    default_priority = 200

    def run(self, **kwargs: object) -> None:
        for placeholder in list(self.document.findall(environment_box)):
            placeholder.replace_self(self.box())

    def box(self) -> nodes.Element:
        state = state_mod.for_env(self.env)
        recs = records(self.env).get(self.env.docname, [])
        box = nodes.container(classes=["snipcheck-environment", "admonition", "note"])
        heading = _("Where the outputs on this page come from")
        box += nodes.paragraph("", "", nodes.strong(heading, heading), classes=["admonition-title"])
        ran = [r for r in recs if r.stamp]
        not_run = [r for r in recs if r.status == "not-run"]
        if ran:
            # The stamps and platform are what the runs' interpreter reported: shown, never raw.
            stamps = visible(_("; ").join(sorted({r.stamp for r in ran})))
            platform = visible(state.stamp.platform) if state.stamp else ""
            if platform:
                text = _(
                    "{count} snippets on this page ran during the build, their output captured as it was, in: "
                    "{stamps} ({platform})."
                ).format(count=len(ran), stamps=stamps, platform=platform)
            else:
                text = _(
                    "{count} snippets on this page ran during the build, their output captured as it was, in: {stamps}."
                ).format(count=len(ran), stamps=stamps)
        elif not state.execute:
            text = _("This build did not execute code: the outputs below are the ones the page source states.")
        else:
            text = _("No snippet on this page ran in this build.")
        box += nodes.paragraph(text, text)
        if not_run:
            needs = Counter(req for r in not_run for req in r.missing)
            why = _(", ").join(f"{render.requirement_label(k)} ×{v}" for k, v in sorted(needs.items()))
            text = _(
                "{count} more snippets did not run because this machine lacks what they need ({why}): they are "
                "marked \"not run in this build\" and show the output the text states, with where it comes from, "
                "not verified by this build."
            ).format(count=len(not_run), why=why)
            box += nodes.paragraph(text, text)
        if state.settings.reference:
            ref = _(
                "The outputs stated in the page source are for the reference environment {reference}; the build "
                "compares them character by character and fails when they differ."
            ).format(reference=state.settings.reference)
            box += nodes.paragraph(ref, ref)
        counts = Counter(r.status for r in recs)
        cached = sum(1 for r in recs if r.status == "ok" and r.origin == "cache")
        parts = [_("{count} snippets in all").format(count=len(recs))]
        checked = counts["ok"]
        if checked and cached:
            parts.append(
                _("{count} ran and match their stated output ({cached} of them from the cache: {compared} were "
                  "all the same as when it was cached)").format(count=checked, cached=cached, compared=compared(state))
            )
        elif checked:
            parts.append(_("{count} ran and match their stated output").format(count=checked))
        if not_run:
            parts.append(_("{count} not run").format(count=len(not_run)))
        bad = sum(counts[s] for s in ("drift", "exec", "timeout", "stopped", "error"))
        if bad:
            parts.append(_("{count} with problems (see the build warnings)").format(count=bad))
        line = _("; ").join(parts) + _(".")
        box += nodes.paragraph(line, line)
        return box


def compared(state: state_mod.BuildState) -> str:
    """What a cached result was checked against before it was reused (see snipcheck.engine.cache.cache_key)."""
    what = _("the code, its helper modules, tags, declared data files and environment variables, and the runner")
    fp = state.fingerprint
    if fp is None or state.stamp is None:
        return _("{what}, and the environment").format(what=what)
    main = [f"Python {state.stamp.python}"] + [f"{n} {fp.version(n)}" for n in ("torch", "numpy") if fp.version(n)]
    names = _(", ").join(name for name, _value in fp.variables)
    return _(
        "{what}, and the environment fingerprint {id} ({main} and the other installed distributions, {count} in "
        "all; the interpreter's path; the environment variables {names})"
    ).format(what=what, id=fp.id, main=_(", ").join(main), count=len(fp.distributions), names=names)


def register(app: Sphinx) -> None:
    app.add_node(environment_box)
    app.add_directive("snipcheck-environment", EnvironmentDirective)
    app.add_post_transform(FillEnvironmentBox)
