"""What a task family is: one declaration, as data, that every generic layer reads instead of asking "which family?".

A family (the Privasis judge protocol, TAB's span measures, replacement quality, ...) brings a scorer and its board
code; the harness only ever reaches them through :data:`FAMILIES`. A family declares:

* ``roles``: the models it asks besides the model under test (``judge`` for Privasis, none for TAB, e.g.
  ``attacker`` for an inference family); the runner builds one engine per role and hands them to the scorer;
* ``schema_versions``: the JSON schemas its ``results.json``, samples rows and ``submission.json`` follow (a
  version shipped in ``leaderboard/schemas/``, or ``"package:path/to/file.schema.json"`` for a plugin's own);
* ``reference_task``: the shipped task whose limits bind an entry made with a task file of its own;
* ``board``: how the board shows and ranks it (:class:`BoardSpec`);
* lazy ``"module:attr"`` targets for its scorer (built from the task), verifier, board row, content digest, viewer,
  and, where it has them, its re-judge, its ``overall`` row and its per-record outcome (a samples row's score and
  whether the record counts as a success, for per-record exports such as Every Eval Ever's instance files), and
  its ``graders``: the models that graded a run's outputs, with their real prompts (:class:`Grader`), so an export
  names a judge, an adversary or a matcher alike;
* ``commands``: the commands it adds to ``privasis-bench`` (:class:`FamilyCommand`), imported only when run.

Built-in families register below; other packages add theirs through the ``privasis_bench.families`` entry-point
group (``name = "my_package.family:FAMILY"``), or in code with ``FAMILIES.register(name, family)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from privasis_bench.registry import Registry, import_target

ENTRY_POINT_GROUP = "privasis_bench.families"


@dataclass(frozen=True)
class CountsColumn:
    """A board column folding several per-entry counts into one cell (Privasis: failed / unjudged / off-label ...)."""

    keys: tuple[str, ...]  # row fields, in display order
    header: str  # the short table header
    label: str  # the long name (cell label on narrow screens; the Markdown header, lower-cased)
    title: str  # the hover text saying what each number is


@dataclass(frozen=True)
class BoardSpec:
    """How the board shows one family: columns, ranking, digits, grouping and the prose of its section.

    Ranks are decided on the verifier's recomputed numbers rounded to ``digits`` (what the board shows): two entries
    that show the same numbers share a rank, whatever lies below the last shown digit.
    """

    unit: str  # one line saying what the numbers are (percentages with intervals over records, ...)
    columns: tuple[tuple[str, str], ...]  # (metric key, column header), in display order
    rank_by: tuple[tuple[str, str], ...]  # (metric key, "higher"/"lower" is better), first key first
    digits: int  # decimals shown
    group_keys: tuple[str, ...] = ()  # row fields that must agree for two entries to be ranked together
    section: str = ""  # the paragraph introducing the family's section of the board
    tolerance: float = 1e-9  # largest |submitted - recomputed| that still counts as equal
    records: str = "Documents"  # header of the column counting what was scored
    counts: CountsColumn | None = None  # a folded counts column, if the family has one
    detail: str = "{span_source}"  # the line under an entry's name after the model (row fields in braces)
    notes: tuple[str, ...] = ("model", "span_source")  # row fields the Markdown notes cell adds at its end
    prose_name: str = ""  # how the board's prose names the family (default: its title)
    #: True when ``rank_by``'s keys pull apart (privacy against utility) so no single order is meaningful: the board
    #: shows each group's Pareto frontier on them instead of a rank (the first key across, the second up)
    frontier: bool = False
    #: What to read instead when every entry of a group ties on the headline (shown under the group, so a table with
    #: no order still says something); empty: only that the group has no order
    tie_hint: str = ""

    @property
    def rank_key(self) -> str:
        """The headline metric (the first ranking key)."""
        return self.rank_by[0][0]


@dataclass(frozen=True)
class Grader:
    """A model that graded a run's outputs in one role (a judge, an adversary, a matcher), as an export shows it."""

    role: str
    model: Mapping[str, Any]  # the results' record of the role's model (``key``, ``label``, ``spec``, ...)
    temperature: float | None
    #: template name -> (where the run says its text came from: a shipped file's portable name or a path, its sha256)
    templates: Mapping[str, tuple[str | None, str]]
    details: Mapping[str, Any] = field(default_factory=dict)  # what else an export should say (parse mode, hashes)


@dataclass(frozen=True)
class FamilyCommand:
    """A command a family adds to the command line: ``privasis-bench NAME`` runs ``target``.

    ``target`` is a ``"module:function"`` written for Typer (its parameters are the command's arguments and options,
    its docstring the command's help); ``summary`` is the line ``privasis-bench --help`` shows without importing it.
    """

    name: str
    target: str
    summary: str


@dataclass(frozen=True)
class FamilySpec:
    """One task family's declaration (see the module docstring)."""

    name: str
    title: str  # human name ("Privasis-Sanitization", "TAB", ...)
    roles: tuple[str, ...]
    schema_versions: Mapping[str, str]
    reference_task: str
    board: BoardSpec
    scorer: str  # "module:Class", built as Class(task)
    verifier: str  # "module:function"
    row: str
    content: str
    viewer: str  # (task_dir, out, title=, back=, metrics=) -> out; ``metrics``: the verifier's recomputed ones
    rejudge: str | None = None
    overall: str | None = None
    sections: str | None = None  # the family's own parts of the board pages (charts, published figures)
    #: ``"package:folder"`` holding task files the family ships besides the harness's own (a plugin's tasks); the
    #: verifier trusts them as shipped tasks (installed code, never a file a submission brings)
    tasks_dir: str | None = None
    record_outcome: str | None = None  # samples row -> (score, correct) or None (unscored), for per-record exports
    graders: str | None = None  # results -> list[Grader], for exports naming the models that graded a run
    commands: tuple[FamilyCommand, ...] = ()  # commands the family adds to the CLI
    rejudge_kinds: tuple[str, ...] = ()  # the decision kinds its re-judge counts agreement by (Agreement.by_kind)
    #: what scoring a failed output as an empty one means for this family, when it means more than an empty output
    empty_output: str = "empty outputs"
    #: prints what ``run``/``evaluate``/``rescore`` show for this family's results (a list of results mappings);
    #: the default is one table of measures per task
    report: str = "privasis_bench.cli.outcome_report:print_measures"
    extra: Mapping[str, Any] = field(default_factory=dict)

    def load(self, what: str) -> Any:
        """The object one of the family's targets (``scorer``, ``verifier``, ``row``, ...) names, imported now."""
        target = getattr(self, what)
        if target is None:
            raise LookupError(f"family {self.name!r} declares no {what}")
        return import_target(target)

    def call(self, what: str, *args: Any, **kwargs: Any) -> Any:
        """Call one of the family's targets."""
        return self.load(what)(*args, **kwargs)


def _check_family(obj: Any, where: str) -> FamilySpec:
    if not isinstance(obj, FamilySpec):
        raise TypeError(f"{where} is not a FamilySpec (got {type(obj).__name__})")
    return obj


FAMILIES: Registry[FamilySpec] = Registry("task family", entry_point_group=ENTRY_POINT_GROUP, check=_check_family)

def declared_roles() -> tuple[str, ...]:
    """Every role a registered family asks besides the model under test (a family that cannot load is skipped)."""
    roles: list[str] = []
    for name in FAMILIES.names():
        try:
            roles += [r for r in FAMILIES.get(name).roles if r not in roles]
        except (ImportError, TypeError):
            continue
    return tuple(roles)


def scorer_class(name: str) -> Any:
    """The scorer class family ``name`` declares, imported now (UnknownName for a name no family holds)."""
    return FAMILIES.get(name).load("scorer")


#: The family of a task that names no ``scorer:``.
DEFAULT_FAMILY = "privasis"


def family_name(results: Mapping[str, Any]) -> str:
    """The family a results file names (``scorer.name``; the default family when it names no scorer)."""
    scorer = results.get("scorer") if isinstance(results, Mapping) else None
    name = scorer.get("name") if isinstance(scorer, Mapping) else None
    return DEFAULT_FAMILY if scorer is None else str(name)

# The built-in families: one line each.
FAMILIES.register("privasis", "privasis_bench.protocol.family:FAMILY")
FAMILIES.register("tab", "privasis_bench.tab.family:FAMILY")
FAMILIES.register("tab_replacement", "privasis_bench.replacement.family:FAMILY")
