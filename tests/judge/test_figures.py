"""Figures (issue 15 §4): what a snippet shows or saves is on the page, and drift is found tolerantly.

A snippet that imports matplotlib gets the Agg backend; ``plt.show()`` sends
each open figure, in its place in the output, and image files it saves into
its working directory are picked up after it ends; ``record`` writes each
figure as a stated file under ``_snipcheck_figures/`` and a placeholder line
into the page; the build compares each figure with its stated file within a
tolerance (``snipcheck.png``) and warns with both images saved in the report.
A snippet that never imports matplotlib sees no difference at all.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from helpers import html, snipcheck_cli, snipcheck_warnings
from snipcheck import png
from snipcheck.judge import figures as figure_files
from snipcheck.model import Event, Figure, RunResult, Stamp
from snipcheck.run import make_runner
from snipcheck.run.python import BOOTSTRAP_DIR, child_environment, prepare_run_dir, remove_run_dir
from snipcheck.sources.snippets import load

pytest.importorskip("matplotlib")  # the test extra brings it

sys.path.insert(0, BOOTSTRAP_DIR)
import _snipcheck_child

sys.path.remove(BOOTSTRAP_DIR)

KINDS = ["subprocess", "fork"]
SHOW = """\
import matplotlib.pyplot as plt

print("before")
plt.plot([1, 2, 3], [1, 4, 9])
plt.show()
print("between", plt.get_fignums())
fig, ax = plt.subplots(figsize=(3, 2))
ax.bar([1, 2], [3, 4])
plt.show()
print("after", end="")
"""
SAVE = """\
import matplotlib.pyplot as plt

plt.plot([3, 1, 2])
plt.savefig("line.png")
plt.savefig("line.svg")
print("saved")
"""


def run(kind: str, stamp: Stamp, root: Path, sources: dict[str, str]) -> list[RunResult]:
    """Run each snippet of ``sources`` (id → code), in order, on one runner of ``kind``."""
    for snippet_id, code in sources.items():
        path = root / "snippets" / f"{snippet_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=("torch",))
    try:
        return [
            runner.run(load(i, root / "snippets", root), timeout=60, output_limit=1 << 20) for i in sources
        ]
    finally:
        getattr(runner, "close", lambda: None)()


def pixels(data: bytes) -> bytes:
    """RGBA pixels by Pillow, the reference decoder."""
    from PIL import Image

    return Image.open(io.BytesIO(data)).convert("RGBA").tobytes()


# --- capture -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_show_sends_each_open_figure_in_its_place_in_the_output(kind: str, stamp: Stamp, tmp_path: Path) -> None:
    (result,) = run(kind, stamp, tmp_path, {"f/show": SHOW})
    assert [(e.kind, e.text) for e in result.events] == [
        ("text", "before\n"),
        ("figure", "[figure 1: 640×480 PNG]\n"),
        ("text", "between []\n"),  # shown figures are closed, as a window the reader closed
        ("figure", "[figure 2: 300×200 PNG]\n"),
        ("text", "after"),
    ]
    assert all(e.stream == "stdout" for e in result.events)
    assert [(f.format, f.name, f.width, f.height) for f in result.figures] == [("png", "", 640, 480), ("png", "", 300, 200)]
    first = png.decode(result.figures[0].data)
    assert (first.width, first.height) == (640, 480)
    assert b"".join(first.rows) == pixels(result.figures[0].data)
    assert first.rows[0] == b"\xff" * 640 * 4  # the white figure background


@pytest.mark.parametrize("kind", KINDS)
def test_saved_image_files_are_picked_up_after_the_run(kind: str, stamp: Stamp, tmp_path: Path) -> None:
    (result,) = run(kind, stamp, tmp_path, {"f/save": SAVE})
    assert "".join(e.text for e in result.events) == (
        "saved\n[figure 1: 640×480 PNG, saved as line.png]\n[figure 2: SVG, saved as line.svg]\n"
    )
    assert [(f.format, f.name) for f in result.figures] == [("png", "line.png"), ("svg", "line.svg")]
    assert result.figures[1].data.startswith(b"<?xml")
    assert len(pixels(result.figures[0].data)) == 640 * 480 * 4


@pytest.mark.parametrize("kind", KINDS)
def test_a_figure_larger_than_a_frame_arrives_whole(kind: str, stamp: Stamp, tmp_path: Path) -> None:
    code = (
        "import numpy as np\nimport matplotlib.pyplot as plt\n"
        "plt.figure(figsize=(10, 10))\nplt.imshow(np.random.default_rng(0).random((400, 400)))\nplt.show()\n"
    )
    (result,) = run(kind, stamp, tmp_path, {"f/big": code})
    (figure,) = result.figures
    assert len(figure.data) > 4 * _snipcheck_child.CHUNK  # many frames
    assert (figure.width, figure.height) == (1000, 1000)
    assert b"".join(png.decode(figure.data).rows) == pixels(figure.data)


@pytest.mark.parametrize("kind", KINDS)
def test_the_snippets_own_backend_choice_is_kept(kind: str, stamp: Stamp, tmp_path: Path) -> None:
    code = (
        "import matplotlib\nmatplotlib.use('svg')\nimport matplotlib.pyplot as plt\n"
        "plt.plot([1, 2])\nplt.show()\nprint(matplotlib.get_backend(), plt.get_fignums())\n"
    )
    (result,) = run(kind, stamp, tmp_path, {"f/svg": code})
    assert "".join(e.text for e in result.events) == "svg [1]\n"  # matplotlib's own show: nothing, figure open
    assert result.figures == ()


@pytest.mark.parametrize("kind", KINDS)
def test_agg_is_chosen_over_a_configured_backend_and_mplbackend_is_respected(
    kind: str, stamp: Stamp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "matplotlibrc").write_text("backend: svg\n")  # read from the working directory
    code = "import matplotlib.pyplot as plt\nprint(plt.get_backend())\nplt.plot([1, 2])\nplt.show()\n"
    deps = '# /// snipcheck\n# depends = ["matplotlibrc"]\n# ///\n'
    chosen = '# /// snipcheck\n# depends = ["matplotlibrc"]\n# env = ["MPLBACKEND"]\n# ///\n'
    monkeypatch.setenv("MPLBACKEND", "pdf")
    agg, own = run(kind, stamp, tmp_path, {"f/rc": code + deps, "f/env": code + chosen})
    assert [e.text for e in agg.events] == ["agg\n", "[figure 1: 640×480 PNG]\n"]
    assert [e.text for e in own.events] == ["pdf\n"] and own.figures == ()


@pytest.mark.parametrize("kind", KINDS)
def test_each_cell_of_a_chain_gets_the_images_it_saved(kind: str, stamp: Stamp, tmp_path: Path) -> None:
    from snipcheck.sources.chains import attach

    sources = {
        "c/a": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('a.png')\nprint('a')\n",
        "c/b": "plt.show()\nprint('b')\n",
        "c/c": "plt.plot([2, 1])\nplt.savefig('c.png')\n",
    }
    for snippet_id, code in sources.items():
        (tmp_path / "snippets" / "c").mkdir(parents=True, exist_ok=True)
        (tmp_path / "snippets" / f"{snippet_id}.py").write_text(code)
    chain = list(attach(("page", "demo", load(i, tmp_path / "snippets", tmp_path)) for i in sources))
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
    try:
        results = runner.run_chain(chain, timeouts=[60] * 3, output_limit=1 << 20)  # type: ignore[arg-type]
    finally:
        getattr(runner, "close", lambda: None)()
    texts = ["".join(e.text for e in r.events) for r in results]
    assert texts == [
        "a\n[figure 1: 640×480 PNG, saved as a.png]\n",
        "[figure 1: 640×480 PNG]\nb\n",  # the figure cell a drew, still open
        "[figure 1: 640×480 PNG, saved as c.png]\n",  # not a.png again: cell a's, unchanged since
    ]
    assert results[2].figures[0].data != results[0].figures[0].data


def test_the_reader_puts_an_image_together_from_its_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    from snipcheck.run import channel as channel_mod

    token = b"T" * channel_mod.TOKEN_BYTES
    chan = channel_mod.Channel()
    try:
        out, err = chan.senders
        reader = channel_mod.Reader(chan, channel_mod.Sink(1 << 20), token)
        image = _snipcheck_child.encode_png(2, 1, b"\x01\x02\x03\xff\x04\x05\x06\xff")

        def frames(*items: tuple[bytes, bytes]) -> None:
            for label, payload in items:
                err.send(token + label + payload)
            reader.drain()

        out.send(b"no newline yet")
        frames((b"F", b"show\0png\0"), (b"f", image[:10]))
        out.send(b" (printed by a thread meanwhile)\n")
        frames((b"f", image[10:]), (b"E", b"%d" % len(image)))
        frames((b"F", b"show\0png\0"), (b"f", image), (b"E", b"%d" % (len(image) + 1)))  # cut short: dropped
        frames((b"F", b"other\0png\0"), (b"f", image), (b"E", b"%d" % len(image)))  # not a source the child sends
        monkeypatch.setattr(channel_mod, "FIGURE_LIMIT", len(image) + 10)
        out.send(b"partial")
        frames((b"F", b"file\0png\0x.png"), (b"f", image), (b"E", b"%d" % len(image)))  # over the limit
    finally:
        chan.close()
    assert [(e.kind, e.text) for e in reader.sink.events({})] == [
        ("text", "no newline yet (printed by a thread meanwhile)\n"),  # a figure's place: where its end arrives
        ("figure", "[figure 1: 2×1 PNG]\n"),
        ("text", "partial"),
        ("figure", f"\n[figure 2: PNG, saved as x.png, not kept ({len(image)} bytes over the figure limit)]\n"),
    ]
    assert reader.sink.figures[0].data == image and reader.sink.figures[1].data == b""


PROBE = """\
import os, sys
print(sorted(sys.modules))
print(sys.modules["_frozen_importlib"]._find_and_load.__code__.co_filename)
print(os.environ.get("MPLBACKEND"), sorted(os.listdir(".")))
open("not-a-figure.txt", "w").close()
"""


def plain_python(snippet_id: str, root: Path) -> str:
    """What ``python snippets/<id>.py`` prints in the fixed environment of a run."""
    snippet = load(snippet_id, root / "snippets", root)
    run_dir, script = prepare_run_dir(snippet)
    try:
        env = child_environment(run_dir)
        env.pop("PYTHONPATH")
        done = subprocess.run([sys.executable, script], cwd=run_dir, env=env, capture_output=True, text=True, check=True)
    finally:
        remove_run_dir(run_dir)
    return done.stdout


@pytest.mark.parametrize("kind", KINDS)
def test_a_snippet_that_never_imports_matplotlib_sees_no_difference(kind: str, stamp: Stamp, tmp_path: Path) -> None:
    # A matplotlib run first, on the same runner (the fork server's slot): nothing of it stays.
    shown, probe = run(kind, stamp, tmp_path, {"f/show": SHOW, "f/probe": PROBE})
    assert shown.figures
    out = "".join(e.text for e in probe.events)
    assert probe.figures == () and all(e.kind == "text" for e in probe.events)
    assert "matplotlib" not in out and "\nNone ['home', 'snippets', 'tmp']\n" in out
    if kind == "subprocess":
        assert out == plain_python("f/probe", tmp_path)  # sys.modules and the import machinery included
    else:
        lines, plain = out.split("\n"), plain_python("f/probe", tmp_path).split("\n")
        assert lines[0] == plain[0]  # the fork runner's own _find_and_load is a documented difference


# --- the model ---------------------------------------------------------------------


def test_figures_round_trip_through_the_cache_form_and_old_entries_still_load(stamp: Stamp) -> None:
    figure = Figure("png", _snipcheck_child.encode_png(1, 1, b"\x01\x02\x03\xff"), "a.png", 1, 1)
    result = RunResult(
        events=(Event("stdout", "figure", figure.placeholder(1) + "\n"),), exit_status=0, signal=None,
        exception=None, duration=0.1, timed_out=False, truncated_bytes=0, stamp=stamp, runner="fork",
        figures=(figure,),
    )  # fmt: skip
    data = json.loads(json.dumps(result.to_json()))  # as the cache stores it
    assert base64.b64decode(data["figures"][0]["data"]) == figure.data
    assert RunResult.from_json(data) == result
    old = dict(data)
    del old["figures"]  # a cache entry written before figures existed
    assert RunResult.from_json(old).figures == ()
    assert figure.sha256 == hashlib.sha256(figure.data).hexdigest()
    assert figure.placeholder(3) == "[figure 3: 1×1 PNG, saved as a.png]"


# --- the PNG decoder and the metric ------------------------------------------------


def filtered_png(width: int, height: int, rgba: bytes, kinds: list[int]) -> bytes:
    """A PNG whose row y uses filter ``kinds[y % len(kinds)]`` (the PNG specification's filters)."""
    stride, bpp = width * 4, 4
    prev = bytes(stride)
    out = bytearray()
    for y in range(height):
        row = rgba[y * stride : (y + 1) * stride]
        kind = kinds[y % len(kinds)]
        enc = bytearray()
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            predictor = [0, a, b, (a + b) // 2, a if pa <= pb and pa <= pc else b if pb <= pc else c][kind]
            enc.append((x - predictor) & 255)
        out += bytes([kind]) + enc
        prev = row

    def chunk(kind: bytes, body: bytes) -> bytes:
        return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")

    head = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes((8, 6, 0, 0, 0))
    return png.SIGNATURE + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(bytes(out))) + chunk(b"IEND", b"")


def test_the_png_decoder_reads_known_images() -> None:
    from PIL import Image

    noise = bytes((i * 37 + (i // 7) * 11) % 256 for i in range(23 * 17 * 4))
    for kinds in ([0], [1], [2], [3], [4], [0, 1, 2, 3, 4]):  # every row filter, and one after another
        data = filtered_png(23, 17, noise, kinds)
        assert b"".join(png.decode(data).rows) == noise == pixels(data), kinds
    image = Image.frombytes("RGBA", (23, 17), noise)
    for mode in ("L", "LA", "RGB", "RGBA", "P", "I;16"):  # what Pillow writes, with its own filter choice
        made = image.convert("RGB").quantize(64) if mode == "P" else image.convert(mode if mode != "I;16" else "L")
        if mode == "I;16":
            made = Image.frombytes("I;16", (23, 17), bytes(b for v in made.tobytes() for b in (0x5A, v)))  # high byte v
        buffer = io.BytesIO()
        made.save(buffer, "png")
        data = buffer.getvalue()
        expected = pixels(data) if mode != "I;16" else Image.frombytes("L", (23, 17), bytes(made.tobytes()[1::2])).convert("RGBA").tobytes()
        assert b"".join(png.decode(data).rows) == expected, mode
    assert png.size(data) == (23, 17)
    interlaced = bytearray(filtered_png(2, 2, bytes(16), [0]))
    interlaced[28] = 1  # the interlace byte of the header (its checksum is not checked)
    with pytest.raises(png.PNGError, match="interlace 1"):
        png.decode(bytes(interlaced))
    with pytest.raises(png.PNGError, match="not a PNG"):
        png.decode(b"<svg/>")


def figure_bytes(ys: list[float]) -> bytes:
    """A 640×480 figure of ``ys`` as the child sends it."""
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    fig = plt.figure()
    plt.plot(ys)
    data = _snipcheck_child.figure_png(fig)
    plt.close(fig)
    return data


def test_the_metric_ignores_a_pixel_of_noise_and_finds_changed_data() -> None:
    data = figure_bytes([1, 4, 9])
    image = png.decode(data)
    rows = list(image.rows)
    row = bytearray(rows[100])
    row[400:404] = b"\x00\x00\x00\xff"  # one pixel, from white to black
    rows[100] = bytes(row)
    noisy = png.Image(image.width, image.height, tuple(rows))
    assert png.compare(image, noisy).matches
    assert png.compare(image, image) == png.Difference(None, 0.0, 0.0)
    changed = png.decode(figure_bytes([1, 4, 8]))
    found = png.compare(image, changed)
    assert not found.matches and found.strong >= png.STRONG_LIMIT
    assert not png.compare(image, png.Image(1, 1, (b"\0" * 4,))).matches  # another size
    started = time.perf_counter()
    verdict = figure_files.compare_bytes(1, Path("x.png"), data, figure_bytes([1, 4, 8]))
    seconds = time.perf_counter() - started
    print(f"\ncomparing two different 640×480 figures took {seconds * 1000:.0f} ms")
    assert verdict.status == "drift" and "of the pixels differ by more than 64" in verdict.detail
    assert seconds < 5  # about 0.06 s on a loaded machine


# --- record, build, drift ----------------------------------------------------------

PAGE = "# Figures\n\n```{snippet} f/plot\n```\n\n```{snippet} f/plain\n```\n"
PLOT = """\
import matplotlib.pyplot as plt

print("a line")
plt.plot([1, 2, 3], [1, 4, 9])
plt.show()
fig, ax = plt.subplots(figsize=(3, 2))
ax.bar([1, 2], [3, 4])
fig.savefig("bars.png")
"""


def project(root: Path) -> Path:
    (root / "snippets" / "f").mkdir(parents=True)
    (root / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\n')
    (root / "index.md").write_text(PAGE)
    (root / "snippets" / "f" / "plot.py").write_text(PLOT)
    (root / "snippets" / "f" / "plain.py").write_text('print("no figure")\n')
    return root


def sphinx(root: Path, out: str, cache: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "sphinx", *options, "-b", "html", str(root), str(root / out)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose outputs and figures were recorded."""
    root = project(tmp_path_factory.mktemp("figures") / "p")
    done = snipcheck_cli(root, "record", cache=root.parent / "cache-record")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_record_writes_each_figure_as_a_file_and_a_placeholder_line(recorded: Path) -> None:
    page = (recorded / "index.md").read_text()
    assert "```{snippet} f/plot\na line\n[figure 1: 640×480 PNG]\n[figure 2: 300×200 PNG, saved as bars.png]\n```" in page
    assert "```{snippet} f/plain\nno figure\n```" in page
    folder = recorded / "_snipcheck_figures" / "f"
    assert sorted(p.name for p in folder.iterdir()) == ["plot-1.png", "plot-2.png"]
    assert png.size((folder / "plot-2.png").read_bytes()) == (300, 200)
    assert not list((recorded / "snippets").rglob("*.png"))


def test_a_cold_build_of_the_same_code_passes_and_shows_the_figures(recorded: Path, tmp_path: Path) -> None:
    built = sphinx(recorded, "html-same", tmp_path / "cache", "-W")  # a fresh cache: every snippet runs
    assert built.returncode == 0, built.stderr
    assert "this build ran 2, took 0 from the cache" in built.stdout
    page = html(recorded / "html-same" / "index.html")
    images = page.select(".snipcheck-output .snipcheck-image img")
    assert [img["alt"] for img in images] == ["Figure 1 of snippet f/plot", "Figure 2 of snippet f/plot, saved as bars.png"]
    stated = (recorded / "_snipcheck_figures" / "f" / "plot-1.png").read_bytes()
    name = f"snipcheck-{hashlib.sha256(stated).hexdigest()}.png"
    assert images[0]["src"] == f"_images/{name}" and (images[0]["width"], images[0]["height"]) == ("640", "480")
    assert (recorded / "html-same" / "_images" / name).read_bytes() == stated  # antialiasing-identical, named by hash
    labels = [p.get_text() for p in page.select(".snipcheck-label-stdout-figure")]
    assert labels == ["figure", "figure"]
    assert "[figure 1" not in page.select_one(".snipcheck-output").get_text()  # the image, not its placeholder


def test_a_pixel_of_noise_in_a_stated_figure_does_not_drift(recorded: Path, tmp_path: Path) -> None:
    stated = recorded / "_snipcheck_figures" / "f" / "plot-1.png"
    original = stated.read_bytes()
    image = png.decode(original)
    rgba = bytearray(b"".join(image.rows))
    rgba[(200 * 640 + 300) * 4 : (200 * 640 + 300) * 4 + 3] = b"\x10\x20\x30"
    try:
        stated.write_bytes(_snipcheck_child.encode_png(640, 480, bytes(rgba)))
        built = sphinx(recorded, "html-noise", tmp_path / "cache", "-W")
    finally:
        stated.write_bytes(original)
    assert built.returncode == 0, built.stderr


def test_changed_data_drifts_with_both_images_in_the_report(recorded: Path, tmp_path: Path) -> None:
    code = recorded / "snippets" / "f" / "plot.py"
    try:
        code.write_text(PLOT.replace("[1, 4, 9]", "[1, 4, 8]"))
        built = sphinx(recorded, "html-drift", tmp_path / "cache")
    finally:
        code.write_text(PLOT)
    assert built.returncode == 1
    (warning,) = snipcheck_warnings(built.stderr)
    report = "html-drift/.doctrees/snipcheck-report/figures/f__plot-1"
    assert re.fullmatch(
        rf".*index\.md:3: WARNING: snippet 'f/plot': figure 1 differs from its stated image "
        rf"_snipcheck_figures/f/plot-1\.png: mean channel difference [\d.]+ \(at most 1 matches\), "
        rf"[\d.]+% of the pixels differ by more than 64 \(fewer than 0\.1% match\); "
        rf"stated image: {report}\.stated\.png, new image: {report}\.actual\.png; "
        r"if the new figure is right, record it: snipcheck record f/plot \[snipcheck\.drift\]",
        warning,
        re.DOTALL,
    ), warning
    assert (recorded / f"{report}.stated.png").read_bytes() == (recorded / "_snipcheck_figures/f/plot-1.png").read_bytes()
    assert not figure_files.compare_bytes(1, Path(), (recorded / f"{report}.stated.png").read_bytes(),
                                          (recorded / f"{report}.actual.png").read_bytes()).ok  # fmt: skip


def test_record_writes_a_changed_figure_and_leaves_the_page_alone(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    assert snipcheck_cli(root, "record", cache=tmp_path / "cache").returncode == 0
    page = (root / "index.md").read_bytes()
    stated = root / "_snipcheck_figures" / "f" / "plot-1.png"
    first = stated.read_bytes()
    (root / "snippets" / "f" / "plot.py").write_text(PLOT.replace("plt.plot([1, 2, 3], [1, 4, 9])", "plt.plot([1, 2, 3], [9, 4, 1])"))
    verified = snipcheck_cli(root, "verify", cache=tmp_path / "cache")
    assert verified.returncode == 1 and "figure 1 differs from its stated image _snipcheck_figures/f/plot-1.png" in verified.stdout
    done = snipcheck_cli(root, "record", cache=tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert (root / "index.md").read_bytes() == page  # the text did not change
    assert stated.read_bytes() != first
    assert sphinx(root, "html", tmp_path / "cache", "-W").returncode == 0
    (root / "snippets" / "f" / "plot.py").write_text('print("a line")\n')  # no figure any more
    (root / "index.md").write_text(PAGE)
    assert snipcheck_cli(root, "record", cache=tmp_path / "cache").returncode == 0
    assert not list((root / "_snipcheck_figures").rglob("*.png"))  # stale figure files removed


def test_accept_writes_the_new_figures_a_verify_run_found(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    assert snipcheck_cli(root, "record", cache=tmp_path / "cache").returncode == 0
    (root / "snippets" / "f" / "plot.py").write_text(PLOT.replace("[1, 4, 9]", "[2, 2, 2]"))
    report = tmp_path / "report.json"
    assert snipcheck_cli(root, "verify", "--json", str(report), cache=tmp_path / "cache").returncode == 1
    assert '"figures"' not in report.read_text() and "figure 1 differs" in report.read_text()  # no images in JSON
    from_json = snipcheck_cli(root, "accept", "--report", str(report), "--force", cache=tmp_path / "cache")
    assert "its figures are not in the report" in from_json.stderr
    accepted = snipcheck_cli(root, "accept", "--force", cache=tmp_path / "cache")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert re.search(r"^wrote .*_snipcheck_figures/f/plot-1\.png$", accepted.stdout, re.MULTILINE)
    assert sphinx(root, "html", tmp_path / "cache", "-W").returncode == 0


def test_a_figure_without_a_stated_file_is_drift_saying_how_to_record_it(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    assert snipcheck_cli(root, "record", cache=tmp_path / "cache").returncode == 0
    (root / "_snipcheck_figures" / "f" / "plot-2.png").unlink()
    built = sphinx(root, "html", tmp_path / "cache")
    assert built.returncode == 1
    (warning,) = snipcheck_warnings(built.stderr)
    assert "figure 2 has no stated image _snipcheck_figures/f/plot-2.png (no stated image yet); new image: " in warning
    assert warning.endswith("record it: snipcheck record f/plot [snipcheck.drift]")


def test_builders_without_images_show_the_placeholder_line(recorded: Path, tmp_path: Path) -> None:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-b", "text", str(recorded), str(tmp_path / "text")],
                           env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert built.returncode == 0, built.stderr
    text = (tmp_path / "text" / "index.txt").read_text()
    assert "[figure 1: 640×480 PNG]" in text and "[figure 2: 300×200 PNG, saved as bars.png]" in text


def test_pytest_snipcheck_checks_the_figures_too(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    assert snipcheck_cli(root, "record", cache=tmp_path / "cache").returncode == 0

    def pytest_run() -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", "index.md"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip

    held = pytest_run()
    assert held.returncode == 0, held.stdout
    (root / "snippets" / "f" / "plot.py").write_text(PLOT.replace("[1, 4, 9]", "[9, 4, 1]"))
    drifted = pytest_run()
    assert drifted.returncode == 1
    assert "snippet 'f/plot' (index.md:3): figure 1 differs from its stated image _snipcheck_figures/f/plot-1.png" in drifted.stdout


def test_a_changed_axis_label_or_title_is_a_changed_figure() -> None:
    # Text is small: a new label changed ~0.26% of a 500x300 figure's pixels
    # strongly, below the first threshold (0.5%) that let it pass as "the same".
    import io

    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    def draw(label: str, title: str = "steps") -> png.Image:
        plt.figure(figsize=(5, 3))
        plt.plot(range(11), range(11), marker="o")
        plt.ylabel(label)
        plt.title(title)
        plt.tight_layout()
        buffer = io.BytesIO()
        plt.savefig(buffer, format="png")
        plt.close()
        return png.decode(buffer.getvalue())

    base = draw("w._version")
    assert png.compare(base, draw("w._version")).matches
    assert not png.compare(base, draw("version of w")).matches
    assert not png.compare(base, draw("w._version", title="steps!")).matches
