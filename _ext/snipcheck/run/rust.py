"""Run a Rust snippet: build it with cargo (offline, std only, release), then run it.

Each snippet becomes one small crate in the cache directory
(``rust/<hash of source>/``) whose binary's source file sits at the snippet's
shown path, so rustc's messages and panics name ``snippets/<id>.rs`` with the
file's own line numbers.  The crate and its ``target/`` directory are kept, so
an unchanged snippet is not rebuilt.

A compile error is a result like any other: rustc's message, exactly as it
prints it (without cargo's own progress lines), on stderr, exit status 101
from cargo, and :class:`~snipcheck.model.ExceptionInfo` type
``"compile error"``.  A panic is recorded as type ``"panic"`` with its
message, so ``expect = "panic"`` can tag an intended one.

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from snipcheck.model import Event, ExceptionInfo, RunResult, Snippet, Stamp
from snipcheck.run import sandbox
from snipcheck.run.capture import run_captured
from snipcheck.run.python import DEFAULT_MEMORY_LIMIT, memory_limit_of, remove_run_dir, supervised_spawner
from snipcheck.run.stopping import refuse_if_stopping, run_helper, track_run_dir

_PANIC = re.compile(r"thread '[^']*'(?: \(\d+\))? panicked at [^\n]*:\n(?P<msg>.*?)(?:\nnote: |\Z)", re.DOTALL)
_CARGO_NOISE = re.compile(r"^\s*(Compiling|Finished|Running|Blocking|Updating|Locking) ", re.MULTILINE)


def rust_environment(run_dir: str) -> dict[str, str]:
    """The fixed environment of a Rust build and run."""
    env = {k: os.environ[k] for k in ("PATH", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN") if k in os.environ}
    home = os.environ.get("HOME")
    if home and "CARGO_HOME" not in env:
        env["CARGO_HOME"] = os.path.join(home, ".cargo")
    if home and "RUSTUP_HOME" not in env and os.path.isdir(os.path.join(home, ".rustup")):
        env["RUSTUP_HOME"] = os.path.join(home, ".rustup")
    env.update(
        {
            "HOME": run_dir,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TZ": "UTC",
            "CARGO_TERM_COLOR": "never",
            "CARGO_NET_OFFLINE": "true",
            "RUST_BACKTRACE": "0",
        }
    )
    return env


class RustRunner:
    """Builds and runs Rust snippets.

    :param build_dir: where the per-snippet crates live (inside the cache).
    :param stamp: environment stamp (its ``rustc`` field is set).
    :param memory_limit: default memory limit of a run in bytes (the
        ``memory`` tag overrides it); ``None`` or 0 for none.
    :param protect: the paths the binary's runs must not change
        (:func:`snipcheck.run.sandbox.protected_paths`); the build by
        cargo is not a snippet's run and gets the file system as it is.
    """

    name = "cargo"

    def __init__(
        self, build_dir: Path, stamp: Stamp, memory_limit: int | None = DEFAULT_MEMORY_LIMIT, protect: Sequence[str] = ()
    ) -> None:
        self.build_dir = Path(build_dir)
        self.stamp = stamp
        self.memory_limit = memory_limit
        self.protect = tuple(protect)

    def _crate(self, snippet: Snippet) -> tuple[Path, str]:
        digest = hashlib.sha256((snippet.path + "\0" + snippet.source).encode()).hexdigest()[:20]
        crate = self.build_dir / digest
        main = crate / snippet.path
        name = re.sub(r"[^a-z0-9_]", "_", snippet.id.rsplit("/", 1)[-1].lower()) or "snippet"
        if not main.is_file():
            main.parent.mkdir(parents=True, exist_ok=True)
            (crate / "Cargo.toml").write_text(
                "[package]\n"
                f'name = "{name}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
                f'[[bin]]\nname = "{name}"\npath = "{snippet.path}"\n\n'
                "[dependencies]\n\n[profile.release]\nincremental = false\n",
                encoding="utf-8",
            )
            main.write_text(snippet.source, encoding="utf-8")
        return crate, name

    def run(self, snippet: Snippet, *, timeout: float, output_limit: int) -> RunResult:
        """Build (if needed) and run ``snippet``; see :meth:`snipcheck.run.Runner.run`."""
        crate, name = self._crate(snippet)
        refuse_if_stopping()
        run_dir = os.path.realpath(tempfile.mkdtemp(prefix="snipcheck-rs-"))
        track_run_dir(run_dir)  # removed once the runs stop, should this thread never get to its finally
        try:
            env = rust_environment(run_dir)
            build = run_helper(  # cargo goes with the runs when they are stopped
                ["cargo", "build", "--release", "--offline", "--quiet", "--message-format=human"],
                cwd=crate,
                env=env,
                timeout=max(timeout, 120),
            )
            if build.returncode != 0:
                text = _CARGO_NOISE.sub("", build.stderr).lstrip("\n")
                first = next((line for line in text.splitlines() if line.startswith("error")), "compile error")
                return RunResult(
                    events=(Event("stderr", "traceback", text),),
                    exit_status=build.returncode,
                    signal=None,
                    exception=ExceptionInfo("compile error", first),
                    duration=0.0,
                    timed_out=False,
                    truncated_bytes=0,
                    stamp=self.stamp,
                    runner=self.name,
                    output_limit=output_limit,
                )
            binary = crate / "target" / "release" / name
            limit = memory_limit_of(snippet, self.memory_limit)
            captured = run_captured(
                supervised_spawner(
                    [str(binary.resolve())], cwd=run_dir, env=env, memory_limit=limit, run_dir=run_dir, token_var=None,
                    mounts=sandbox.run_mounts(self.protect, limit),
                ),
                timeout=timeout,
                output_limit=output_limit,
            )
        finally:
            remove_run_dir(run_dir)
        exception = None
        if captured.exit_status == 101:
            stderr = "".join(e.text for e in captured.events if e.stream == "stderr")
            m = _PANIC.search(stderr)
            if m:
                exception = ExceptionInfo("panic", m.group("msg").strip())
        return captured.result(
            stamp=self.stamp, runner=self.name, output_limit=output_limit, exception=exception, memory_limit=limit
        )
