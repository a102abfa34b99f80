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

from . import state as state_mod
from .collector import records

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
        title = nodes.paragraph("", "", nodes.strong("本页的输出从哪里来", "本页的输出从哪里来"), classes=["admonition-title"])
        box += title
        ran = [r for r in recs if r.stamp]
        not_run = [r for r in recs if r.status == "not-run"]
        if ran:
            stamps = "；".join(sorted({r.stamp for r in ran}))
            platform = state.stamp.platform if state.stamp else ""
            text = (
                f"本页有 {len(ran)} 个代码片段在构建时真实运行，输出原样抓取，运行环境：{stamps}"
                + (f"（{platform}）" if platform else "")
                + "。"
            )
        elif not state.execute:
            text = "本次构建没有执行代码：下面显示的是章节源文件里陈述的输出。"
        else:
            text = "本页没有在本次构建中运行的代码片段。"
        box += nodes.paragraph(text, text)
        if not_run:
            needs = Counter(req for r in not_run for req in r.missing)
            why = "、".join(f"{k} ×{v}" for k, v in sorted(needs.items()))
            text = (
                f"另有 {len(not_run)} 个代码片段因本机缺少所需环境（{why}）没有运行：它们带有“本次构建未运行”的标记，"
                "显示的是正文陈述的输出及其来源，未经本次构建验证。"
            )
            box += nodes.paragraph(text, text)
        if state.settings.reference:
            ref = f"章节源文件里陈述的输出以参考环境 {state.settings.reference} 为准；构建时逐字比对，不一致则构建失败。"
            box += nodes.paragraph(ref, ref)
        counts = Counter(r.status for r in recs)
        origins = Counter(r.origin for r in recs)
        parts = [f"共 {len(recs)} 个代码片段"]
        checked = counts["ok"]
        if checked:
            parts.append(f"{checked} 个已运行并与陈述一致（其中 {origins['cache']} 个取自缓存：{compared(state)}都与缓存时相同）")
        if not_run:
            parts.append(f"{len(not_run)} 个未运行")
        bad = sum(counts[s] for s in ("drift", "exec", "timeout", "error"))
        if bad:
            parts.append(f"{bad} 个有问题（见构建警告）")
        line = "；".join(parts) + "。"
        box += nodes.paragraph(line, line)
        return box


def compared(state: state_mod.BuildState) -> str:
    """What a cached result was checked against before it was reused (see snipcheck.cache.cache_key)."""
    what = "代码、辅助模块、标签、声明的数据文件与环境变量、运行方式"
    fp = state.fingerprint
    if fp is None or state.stamp is None:
        return what + "与环境"
    main = [f"Python {state.stamp.python}"] + [f"{n} {fp.version(n)}" for n in ("torch", "numpy") if fp.version(n)]
    names = "、".join(name for name, _ in fp.variables)
    return f"{what}与环境指纹 {fp.id}（{'、'.join(main)} 等共 {len(fp.distributions)} 个已安装的发行包，解释器路径，环境变量 {names}）"


def register(app: Sphinx) -> None:
    app.add_node(environment_box)
    app.add_directive("snipcheck-environment", EnvironmentDirective)
    app.add_post_transform(FillEnvironmentBox)
