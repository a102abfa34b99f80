"""The benchmark's generated corpus: small torch snippets on pages, with their stated outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def corpus(dest: Path, count: int, per_page: int = 25, conf: Path = ROOT / "conf.py", busy: float = 0.0) -> Path:
    """A project of ``count`` small torch snippets on pages of ``per_page``
    (the seeds' site: 400 pages of 25 for 10,000).

    Each stated output is what its code prints, worked out here rather than
    by ``record`` (which would run every snippet twice more); the cold build
    compares every one of them with a real run, and its exit status is shown.
    ``conf``: the ``conf.py`` it starts from (another checkout's, to measure
    that checkout).  ``busy``: seconds of CPU work each snippet does first
    (a tutorial's cell does more than one in-place multiply).
    """
    (dest / "docs").mkdir(parents=True)
    (dest / "snippets" / "gen").mkdir(parents=True)
    # The chapter's configuration, but its server preloads torch only: these
    # snippets never reach torch._dynamo, which would double the fork cost.
    (dest / "conf.py").write_text(conf.read_text() + '\nsnipcheck_preload = ["torch"]\n')
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")
    pages = []
    for start in range(0, count, per_page):
        page = f"page{start // per_page:03d}"
        pages.append(page)
        body = [f"# {page}\n"]
        for i in range(start, min(start + per_page, count)):
            n, k = i % 7 + 2, i % 5 + 1
            work = f"import time\nt0 = time.perf_counter()\nwhile time.perf_counter() - t0 < {busy}:\n    pass\n" if busy else ""
            (dest / "snippets" / "gen" / f"s{i:05d}.py").write_text(
                work + "import torch\n"
                f"x = torch.arange({n}.0)\n"
                "before = x.data_ptr()\n"
                f"x.mul_({k})\n"
                "print(x.tolist(), x._version, x.data_ptr() == before)\n"
            )
            stated = f"{[float(v * k) for v in range(n)]} 1 True"
            body.append(f"```{{snippet}} gen/s{i:05d}\n{stated}\n```\n")
        (dest / "docs" / f"{page}.md").write_text("\n".join(body))
    (dest / "docs" / "index.md").write_text("# Corpus\n\n```{toctree}\n" + "\n".join(pages) + "\n```\n")
    return dest
