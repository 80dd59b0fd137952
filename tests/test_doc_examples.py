"""Every `privasis-bench` command shown in README.md and docs/ matches the CLI, and the quick offline ones run.

Each ```bash block is read; each line (backslash continuations joined) that runs `privasis-bench` is split like a
shell would. Every command is checked against the real command definitions: the command and sub-command exist,
every option is one that command accepts, and an option that takes a value has one. Commands that are fast and
offline (listing tasks, data, models, the lm-eval path, the version) are also run, and must exit 0. The slow ones
(model calls) are covered by the integration tests (tests/integration/test_run_smollm2.py runs the quick start).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from privasis_bench.cli.lazy import COMMANDS, load_command

REPO = Path(__file__).resolve().parents[1]
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
    if name not in COMMANDS:
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
