"""CI runs the README's test command verbatim, and treats "no tests collected" as a failure."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CI_RUN = REPO / ".ci" / "run"
README = REPO / "README.md"


def readme_test_command() -> str:
    """The one command line in the README's bash blocks that runs pytest."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    lines = [line.strip() for block in blocks for line in block.splitlines() if re.search(r"\bpytest\b", line)]
    assert len(lines) == 1, f"expected exactly one pytest command in the README, found {lines}"
    return lines[0]


@pytest.fixture()
def ci_files() -> None:
    if not (CI_RUN.is_file() and README.is_file()):
        pytest.skip("not a source checkout (.ci/run or README.md missing)")


@pytest.mark.usefixtures("ci_files")
def test_ci_run_contains_the_readme_test_command_verbatim() -> None:
    command = readme_test_command()
    script_lines = [line.strip() for line in CI_RUN.read_text(encoding="utf-8").splitlines()]
    assert command in script_lines


@pytest.mark.usefixtures("ci_files")
def test_ci_scripts_are_valid_bash_and_exit_5_is_a_failure() -> None:
    for script in sorted((REPO / ".ci").iterdir()):
        if script.is_file():
            subprocess.run(["bash", "-n", str(script)], check=True)
    text = CI_RUN.read_text(encoding="utf-8")
    assert re.search(r'if \[ "\$rc" -eq 5 \]; then.*?exit 1', text, flags=re.S)
    assert text.rstrip().endswith('exit "$rc"')


@pytest.mark.usefixtures("ci_files")
def test_ci_run_rebuilds_the_board_after_the_tests_and_fails_on_a_difference() -> None:
    text = CI_RUN.read_text(encoding="utf-8")
    tests_at = text.index(readme_test_command())
    check = re.search(r"privasis-bench leaderboard build --check[^\n]*-o leaderboards\n\s*brc=\$\?", text)
    assert check and check.start() > tests_at
    assert re.search(r'if \[ "\$rc" -eq 0 \] && \[ "\$brc" -ne 0 \]; then rc=1; fi', text)


@pytest.mark.usefixtures("ci_files")
def test_ci_run_prints_the_time_of_each_phase() -> None:
    text = CI_RUN.read_text(encoding="utf-8")
    for name in ("install", "tests: slow tier", "tests: integration tier", "tests: unit tier", "leaderboard verify",
                 "leaderboard build --check"):
        assert f'phase "{name}"' in text, name
    assert re.search(r'echo "::: phase \'\$phase_name\' took \$\(\(now - phase_start\)\)s"', text)
    trap = text.index("trap '")
    assert trap < text.index(readme_test_command()) < text.index("trap - DEBUG")


@pytest.mark.usefixtures("ci_files")
def test_the_readme_command_runs_every_tier() -> None:
    command = readme_test_command()
    assert "--runslow" in command and "--runintegration" in command
    unit, slow, integration = command.split(" && pytest ")[1:]
    assert "-n 3 --dist worksteal" in unit and "--runslow" not in unit  # the unit tier alone: its tier check holds
    assert "-n 2 --dist worksteal --runslow -m slow " in slow and "--runintegration" not in slow
    assert "-n 2 --dist loadgroup --runslow --runintegration -m integration " in integration  # a server per group


@pytest.mark.usefixtures("ci_files")
def test_the_phase_timer_names_each_step_of_the_readme_command() -> None:
    text = CI_RUN.read_text(encoding="utf-8")
    timer = text[text.index("start=$(date +%s)"):text.index("# --- the README's test command, verbatim ---")]
    # the README's line with every program replaced by a no-op function, then the phases that follow it
    # (the background verify the unit tier's phase starts is replaced by a no-op too)
    script = ("bash() { :; }\npytest() { :; }\n" + timer + "start_verify() { :; }\nfinish_verify() { :; }\n"
              + readme_test_command().replace(". .venv/bin/activate", "true")
              + '\ntrap - DEBUG\nphase "leaderboard verify"\nphase ""\n')
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    assert re.findall(r"::: phase '([^']+)' took \d+s", out) == [
        "install", "tests: unit tier", "tests: slow tier", "tests: integration tier", "leaderboard verify"]


def _verified_base(repo: Path, env: dict[str, str] | None = None) -> tuple[str, str]:
    """(stdout, stderr) of .ci/verified-base run in ``repo``."""
    base_env = {"PATH": "/usr/bin:/bin", "HOME": str(repo), **(env or {})}
    done = subprocess.run(["bash", str(REPO / ".ci" / "verified-base")], cwd=repo, env=base_env,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip(), done.stderr.strip()


@pytest.mark.usefixtures("ci_files")
def test_the_verified_base_is_the_hosts_record_or_the_nearest_annotated_tag_on_an_ancestor(tmp_path: Path) -> None:
    from git_fakes import commit, git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    rev = lambda ref: subprocess.run(["git", "rev-parse", ref], cwd=repo, capture_output=True,  # noqa: E731
                                     text=True, check=True).stdout.strip()
    for name in ("a", "b", "c"):
        (repo / name).write_text(name)
        commit(repo, name)
    a, b, c = rev("HEAD~2"), rev("HEAD~1"), rev("HEAD")
    out, err = _verified_base(repo)
    assert out == "" and "every entry is re-judged" in err  # no record: the full check
    git(repo, "tag", "board-verified/light", b)  # a lightweight tag says nobody's run passed: ignored
    assert _verified_base(repo)[0] == ""
    git(repo, "tag", "-a", "board-verified/old", a, "-m", "full check passed")
    git(repo, "tag", "-a", "board-verified/new", b, "-m", "full check passed")
    git(repo, "tag", "-a", "unrelated/x", c, "-m", "not a verification")
    out, err = _verified_base(repo)
    assert out == b and "board-verified/new" in err  # the nearest annotated tag on an ancestor
    git(repo, "checkout", "-q", "-b", "other", a)  # a history the tagged commit is not part of
    (repo / "d").write_text("d")
    commit(repo, "d")
    assert _verified_base(repo)[0] == a
    git(repo, "checkout", "-q", "main")
    assert _verified_base(repo, {"PRIVASIS_BENCH_VERIFIED_BASE": c})[0] == c  # the host's record comes first
    out, err = _verified_base(repo, {"PRIVASIS_BENCH_VERIFIED_BASE": rev("other")})  # not an ancestor: ignored
    assert out == b and "not an ancestor" in err


def test_tests_sharing_a_server_or_the_ray_cluster_run_on_one_worker() -> None:
    from types import SimpleNamespace

    from integration.servers import server_group

    def item(name: str, *fixtures: str) -> SimpleNamespace:
        return SimpleNamespace(path=Path("tests") / name, nodeid=f"tests/{name}::test_x",
                               fixturenames=[*fixtures, "tmp_path"])

    assert server_group(item("test_a.py", "llama_server_url")) == server_group(item("test_b.py", "vllm_server_url")) \
        == server_group(item("test_c.py", "llama_server_url", "vllm_server_root")) == "servers"
    assert server_group(item("test_d.py", "ray_address")) == server_group(item("test_e.py", "ray_cluster")) \
        == server_group(item("test_scaling_doc_blocks.py")) == "ray"  # starts Ray nodes of its own
    assert server_group(item("test_f.py", "in_process_smollm2")) == "tests/test_f.py"  # nothing shared: by file


def test_loadgroup_keeps_each_group_on_one_worker_with_the_pinned_pytest(tmp_path: Path) -> None:
    """The pinned pytest and pytest-xdist honour ``xdist_group`` (pytest 9.2 with xdist 3.8 silently does not)."""
    (tmp_path / "test_groups.py").write_text(
        "import os, pytest\n"
        "@pytest.mark.parametrize('group', ['a', 'b'] * 4)\n"
        "def test_x(group):\n"
        "    with open(f'{group}.workers', 'a') as out:\n"
        "        out.write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text(
        "import pytest\n"
        "@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        "        item.add_marker(pytest.mark.xdist_group(item.callspec.params['group']))\n", encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-n", "2", "--dist", "loadgroup"]
    done = subprocess.run([*argv, "test_groups.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    for group in ("a", "b"):
        workers = set((tmp_path / f"{group}.workers").read_text().split())
        assert len(workers) == 1, f"group {group} ran on {sorted(workers)}: --dist loadgroup ignored the marks"
