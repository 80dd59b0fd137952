"""A task family adds commands to ``privasis-bench`` through its declaration (``FamilySpec.commands``): they are listed
by ``--help`` without importing their module, run like the harness's own, and a family that cannot load breaks
nothing."""

from __future__ import annotations

import sys

import pytest
from cli_main import run_main

from privasis_bench.cli.lazy import COMMANDS, all_commands, family_commands
from privasis_bench.tasks.family import FAMILIES


@pytest.fixture
def toy():
    FAMILIES.register("toy", "tests.toy_family.family:FAMILY")
    yield
    FAMILIES.unregister("toy")


def test_the_built_in_families_commands_come_from_their_declarations():
    assert {"export-tab-masks", "tab-background", "replacement-chart"} <= set(family_commands())
    assert not set(family_commands()) & set(COMMANDS)  # the harness's own table names no family command
    assert family_commands()["export-tab-masks"][0] == "privasis_bench.tab.commands:export_tab_masks"


def test_a_registered_familys_command_is_listed_unloaded_and_runs(toy, tmp_path, monkeypatch, capsys):
    sys.modules.pop("tests.toy_family.commands", None)
    code, out, err = run_main(["--help"], monkeypatch, capsys)
    assert code == 0 and "toy-guesses" in out and "Print the attacker's guess" in out
    assert "tests.toy_family.commands" not in sys.modules  # listed from the declaration, not imported
    assert list(all_commands())[-1] == "toy-guesses"  # after the harness's commands
    code, out, err = run_main(["toy-guesses", str(tmp_path / "nothing")], monkeypatch, capsys)
    assert code != 0 and "nothing" in out + err  # the command ran and named the missing run


def test_a_family_that_cannot_load_adds_no_command_and_breaks_no_help(monkeypatch, capsys):
    FAMILIES.register("broken", "no_such_package.family:FAMILY")
    try:
        assert "toy-guesses" not in family_commands() and "export-tab-masks" in family_commands()
        code, out, _ = run_main(["--help"], monkeypatch, capsys)
        assert code == 0 and "export-tab-masks" in out
    finally:
        FAMILIES.unregister("broken")
