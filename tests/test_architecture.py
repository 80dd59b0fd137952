"""The package layout is the architecture: layers import only downwards, modules stay small, each subpackage says what it holds."""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "privasis_bench"

#: What each subpackage may import besides itself and the shared root modules (:data:`SHARED_ROOT`).
ALLOWED: dict[str, set[str]] = {
    "tasks": set(),
    "data": {"tasks"},
    "adapters": {"data"},
    "engine": {"adapters"},
    "protocol": {"data", "tasks", "adapters"},
    "tab": {"data", "tasks"},
    "spia": {"data", "tasks", "adapters", "tab"},
    "results": {"data", "tasks", "protocol"},
    "interop": {"data", "tasks", "adapters", "protocol"},
    "pipeline": {"data", "tasks", "adapters", "engine", "protocol", "results", "interop"},
    "training": {"data", "tasks", "protocol", "results"},
    "replacement": {"data", "tasks", "protocol", "tab"},
    "leaderboard": {"data", "tasks", "adapters", "engine", "protocol", "results", "tab", "replacement", "spia"},
    "recipes": {"data", "tasks", "adapters", "engine", "protocol"},
    "distributed": {"data", "tasks", "adapters", "engine", "protocol", "results", "pipeline", "recipes"},
    "cli": {"data", "tasks", "adapters", "engine", "protocol", "results", "interop", "pipeline", "training", "leaderboard",
            "recipes", "distributed", "replacement"},
}
ROOT_MODULES = {"errors", "fsutil", "registry", "__init__", "__main__"}
#: Root modules every layer may import (small shared helpers with no dependencies of their own).
SHARED_ROOT = {"errors", "fsutil", "registry", "__version__"}
MAX_LINES = 400


@lru_cache(maxsize=None)
def _parsed(path: Path) -> ast.Module:
    """The syntax tree of one module, parsed once per test process for every check that reads it (issue 52)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_tasks" not in p.parts)


#: A task family's own commands (``FamilySpec.commands``) live in ``<family package>/commands.py``: command-line
#: modules, so they are of the CLI layer (they may read run folders), and nothing in the package imports them.
FAMILY_COMMANDS = "commands.py"


def _layer(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    if len(rel.parts) == 2 and rel.name == FAMILY_COMMANDS:
        return "cli"
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


@lru_cache(maxsize=None)
def _imported_layers(path: Path) -> frozenset[str]:
    """Top-level privasis_bench subpackages (or root modules) imported anywhere in ``path``, also inside functions."""
    found: set[str] = set()
    for node in ast.walk(_parsed(path)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module + "." + a.name for a in node.names] if node.module == "privasis_bench" else [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "privasis_bench" and len(parts) > 1:
                found.add(parts[1])
    return frozenset(found)


def test_every_subpackage_is_known_to_the_layer_rules():
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subpackages == set(ALLOWED), "a new subpackage needs its place in ALLOWED (and in README's Architecture)"


def _downward_problem(path: Path) -> str | None:
    layer = _layer(path)
    if layer in ROOT_MODULES:
        allowed = SHARED_ROOT | ({"cli"} if layer == "__main__" else set())
    else:
        allowed = ALLOWED[layer] | {layer, path.relative_to(PACKAGE).parts[0]} | SHARED_ROOT  # a family's commands: its own package too
    wrong = sorted(_imported_layers(path) - allowed)
    return f"{path.relative_to(PACKAGE)} (layer {layer!r}) imports {wrong}; allowed: {sorted(allowed)}" if wrong else None


#: The per-module checks below are one test each over every module (one test item per module made ~750 items of
#: pytest overhead, issue 52); each names every offending module.
def test_imports_go_only_downwards():
    problems = [x for x in map(_downward_problem, _modules()) if x]
    assert not problems, "\n".join(problems)


def test_no_import_cycles_between_subpackages():
    graph: dict[str, set[str]] = {}
    for path in _modules():
        layer = _layer(path)
        if layer in ALLOWED:
            graph.setdefault(layer, set()).update(x for x in _imported_layers(path) if x in ALLOWED and x != layer)
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 1:
            raise AssertionError("import cycle: " + " -> ".join(trail + [node]))
        if state.get(node) == 2:
            return
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(graph):
        visit(node, [])


@lru_cache(maxsize=None)
def _module_imports(path: Path) -> frozenset[str]:
    """Dotted privasis_bench modules ``path`` imports anywhere (also under TYPE_CHECKING and inside functions)."""
    found: set[str] = set()
    for node in ast.walk(_parsed(path)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return frozenset(m for m in found if m.startswith("privasis_bench."))


#: Subpackages whose modules must read top-down (no two modules importing each other, directly or around a loop).
TOP_DOWN = tuple(ALLOWED)


@pytest.mark.parametrize("sub", TOP_DOWN)
def test_no_import_cycles_between_modules_of_a_subpackage(sub: str):
    paths = {f"privasis_bench.{sub}.{p.stem}": p for p in (PACKAGE / sub).glob("*.py") if p.stem != "__init__"}
    graph = {name: _module_imports(path) & set(paths) - {name} for name, path in paths.items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 1:
            raise AssertionError("import cycle: " + " -> ".join(trail + [node]))
        if state.get(node) == 2:
            return
        state[node] = 1
        for nxt in sorted(graph[node]):
            visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(graph):
        visit(node, [])


def test_the_rules_table_itself_is_acyclic():
    order: list[str] = []
    remaining = dict(ALLOWED)
    while remaining:
        ready = [k for k, deps in remaining.items() if deps <= set(order)]
        assert ready, f"ALLOWED has a cycle among {sorted(remaining)}"
        order.extend(sorted(ready))
        for k in ready:
            del remaining[k]


def test_modules_stay_small():
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in _modules()}
    problems = [f"{path.relative_to(PACKAGE)} has {lines} lines (limit {MAX_LINES}): split it by concept"
                for path, lines in sizes.items() if lines > MAX_LINES]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("init", sorted(PACKAGE.glob("*/__init__.py")), ids=lambda p: p.parent.name)
def test_every_subpackage_says_what_lives_there_and_what_it_may_import(init: Path):
    doc = ast.get_docstring(_parsed(init))
    assert doc, f"{init.parent.name}/__init__.py needs a docstring"
    assert "import" in doc.lower(), f"{init.parent.name}/__init__.py should say what it may import"


def test_the_two_scorers_never_import_each_other():
    """protocol/ (the Privasis judge protocol) and tab/ (TAB's measures) are independent scorers."""
    for layer, other in (("protocol", "tab"), ("tab", "protocol")):
        assert other not in ALLOWED[layer]
        offenders = [p.relative_to(PACKAGE).as_posix() for p in (PACKAGE / layer).rglob("*.py") if other in _imported_layers(p)]
        assert not offenders, f"{offenders} import {other}/"
    generic = ("pipeline/run.py", "pipeline/job.py", "pipeline/scorers.py", "tasks/scoring.py")
    assert all("tab" not in _imported_layers(PACKAGE / m) for m in generic), "the generic runner names no scorer package"


def test_nothing_imports_a_familys_command_module():
    """A family's commands are reached through its declaration only (a lazy target string), never imported."""
    commands = {f"privasis_bench.{p.parent.name}.commands" for p in PACKAGE.glob(f"*/{FAMILY_COMMANDS}")}
    assert commands, "no family command module found: the rule would test nothing"
    importers = sorted(p.relative_to(PACKAGE).as_posix() for p in _modules() if _module_imports(p) & commands)
    assert not importers, f"{importers} import a family's command module"


def test_the_rules_catch_a_wrong_import(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from privasis_bench.pipeline.run import evaluate_task\n")
    assert "pipeline" in _imported_layers(bad) and "pipeline" not in ALLOWED["protocol"]


#: Libraries the CLI must not import when it starts: each costs tens to hundreds of milliseconds.
CLI_START_FORBIDDEN = ("pandas", "datasets", "numpy", "scipy", "pyarrow", "openai", "anthropic", "jsonschema", "torch",
                       "rapidfuzz", "bm25s", "httpx")


def _top_level_imports(path: Path) -> set[str]:
    """Root module names imported at module level (not inside a function or a TYPE_CHECKING block)."""
    tree = _parsed(path)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted([*(PACKAGE / "cli").glob("*.py"), *PACKAGE.glob(f"*/{FAMILY_COMMANDS}")]),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_cli_modules_import_no_heavy_library_at_top_level(path: Path):
    assert not (_top_level_imports(path) & set(CLI_START_FORBIDDEN)), \
        f"{path.name}: import heavy libraries inside the command that needs them"


def test_help_and_version_import_no_command_module_and_no_heavy_library():
    code = ("import sys\nfrom privasis_bench.cli import app\n"
            "for argv in (['--version'], ['--help']):\n"
            "    try:\n        app(argv, standalone_mode=False)\n    except SystemExit:\n        pass\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in %r or m.endswith(('_cmds', '.commands')))\n"
            "print('LOADED', loaded)\n") % (CLI_START_FORBIDDEN,)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "LOADED []"


def test_only_the_inspect_task_module_imports_inspect_ai_at_top_level():
    """inspect_ai is an optional extra: the module inspect loads by entry point is the one place it is imported eagerly."""
    importers = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if "inspect_ai" in _top_level_imports(p))
    assert importers == ["interop/inspect_task.py"]


def test_one_deep_merge_for_task_and_recipe_yaml():
    """Task YAMLs and recipe YAMLs merge their ``include:`` the same way: one implementation, used by both."""
    definers = sorted(p.relative_to(PACKAGE).as_posix() for p in _modules()
                      for node in ast.walk(_parsed(p))
                      if isinstance(node, ast.FunctionDef) and "merge" in node.name and "deep" in node.name)
    assert definers == ["tasks/registry.py"]
    assert "deep_merge" in (PACKAGE / "recipes" / "config.py").read_text(encoding="utf-8")


# --- No generic module names a task family (issue 49) ------------------------------------------------------------
#: Where a family may be named: its own package, its board code, and the registration lines in tasks/family.py.
FAMILY_HOMES = ("protocol/", "tab/", "replacement/", "spia/", "leaderboard/families/")
FAMILY_REGISTRATION = "tasks/family.py"
#: Modules that hold a family's board code or declaration: importing one names that family.
FAMILY_MODULE_PREFIXES = ("privasis_bench.leaderboard.families", "privasis_bench.protocol.family",
                          "privasis_bench.tab.family", "privasis_bench.replacement.family")


def _family_names() -> set[str]:
    from privasis_bench.tasks.family import FAMILIES

    return set(FAMILIES.names())


def family_mentions(source: str, names: set[str]) -> list[str]:
    """Where ``source`` names a family: a string constant equal to a registered family's name (a comparison, a dict
    key, a default) or an import of a family's board code or declaration module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.append(f"line {node.lineno}: the string {node.value!r}")
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for module in modules:
            if module.startswith(FAMILY_MODULE_PREFIXES):
                found.append(f"line {node.lineno}: imports {module}")
                break
    return found


def _generic_modules() -> list[Path]:
    out = []
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(FAMILY_HOMES) or rel == FAMILY_REGISTRATION:
            continue
        out.append(path)
    return out


def test_no_generic_module_names_a_family():
    names = _family_names()
    problems = [f"{path.relative_to(PACKAGE)} names a task family ({'; '.join(found)}): ask the family's "
                "declaration (tasks.family.FAMILIES) instead, or move the code into the family's package"
                for path in _generic_modules() if (found := family_mentions(path.read_text(encoding="utf-8"), names))]
    assert not problems, "\n".join(problems)


def test_the_family_guard_catches_a_name_and_an_import():
    names = {"privasis", "tab", "tab_replacement"}
    assert family_mentions("x = 1 if fam == 'tab' else 2", names) == ["line 1: the string 'tab'"]
    assert family_mentions("from privasis_bench.leaderboard.families.tab import verify", names)
    assert family_mentions("import privasis_bench.protocol.family", names)
    assert not family_mentions("TAB_COLUMNS = 'table'\nname = FAMILIES.get(spec.name)", names)
