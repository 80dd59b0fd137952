"""Write the CLI reference (docs/cli.md) from the Typer app itself, so `--help` and the docs cannot disagree.

Usage: ``python -m privasis_bench.cli.docgen [--check] [PATH]`` (default ``docs/cli.md``). ``--check`` exits 1 when
the file on disk differs from what the app would generate (the test suite runs that check).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from privasis_bench.cli.lazy import all_commands, load_command

HEADER = ("# Command-line reference\n\nGenerated from the command definitions by `python -m privasis_bench.cli.docgen`; "
          "do not edit by hand (a test fails when this file is stale). `privasis-bench COMMAND --help` shows the same.\n")


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell (no raw HTML tags, no column breaks)."""
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def _default(param: Any) -> str:
    value = getattr(param, "default", None)
    if getattr(param, "required", False):
        return "required"
    if value is None or value == () or value == []:
        return ""
    if getattr(param, "is_flag", False) and value is False:
        return ""
    text = str(value)
    return f"`{text}`" if text else ""


def _type(param: Any) -> str:
    """The value type, with its allowed range when it has one."""
    if getattr(param, "is_flag", False):
        return "flag"
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    name = getattr(annotation, "__name__", None) or str(annotation or "").replace("typing.", "")
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    bounds = "" if low is None and high is None else f" ({'' if low is None else low}..{'' if high is None else high})"
    return f"{name}{bounds}"


def _option_rows(command: Any) -> list[str]:
    rows = []
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        names = ", ".join(f"`{o}`" for o in [*param.opts, *getattr(param, "secondary_opts", [])])
        kind = "argument" if param.param_type_name == "argument" else ""
        text = _md(" ".join(str(getattr(param, "help", "") or "").split()))
        rows.append(f"| {names or param.name} | {kind or _type(param)} | {_default(param)} | {text} |")
    return rows


def _section(path: str, command: Any) -> list[str]:
    help_text = _md(" ".join(str(command.help or "").split()))
    out = [f"## `privasis-bench {path}`", "", help_text, ""]
    subcommands = getattr(command, "commands", None)
    if subcommands:
        out += [f"Subcommands: {', '.join(f'`{n}`' for n in sorted(subcommands))}.", ""]
        for name in sorted(subcommands):
            out += _section(f"{path} {name}", subcommands[name])
        return out
    rows = _option_rows(command)
    if rows:
        out += ["| option | type | default | description |", "|---|---|---|---|", *rows, ""]
    return out


def render() -> str:
    """The whole reference as Markdown, commands in `privasis-bench --help` order."""
    parts = [HEADER, "| command | what it does |", "|---|---|"]
    commands = all_commands()
    parts += [f"| [`{name}`](#privasis-bench-{name}) | {_md(short)} |" for name, (_, short) in commands.items()]
    parts.append("")
    for name in commands:
        parts += _section(name, load_command(name))
    return "\n".join(parts).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check``, compare) the reference; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    target = Path(paths[0] if paths else "docs/cli.md")
    text = render()
    if check:
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            print(f"{target} is stale: run `python -m privasis_bench.cli.docgen {target}`", file=sys.stderr)
            return 1
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
