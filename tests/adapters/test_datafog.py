"""The datafog: adapter on the real DataFog regex engine: what it removes and keeps, its settings, bad arguments."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest
from deid_helpers import TEXT, check_reported, need, request

from privasis_bench.adapters.registry import board_descriptions, build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import ModelSpecError

need("datafog")


def _run(spec: str, text: str = TEXT):
    adapter = build_adapter(ModelSpec.parse(spec))
    (result,) = adapter.generate_batch([request(text)])
    return adapter, result


def test_contact_details_and_numbers_go_names_and_places_stay():
    adapter, result = _run("datafog")
    replaced = check_reported(TEXT, result)
    assert replaced == {"maria.rossi@example.com": "[EMAIL_1]", "+1 415 555 0132": "[PHONE_1]", "03/04/2024": "[DATE_1]",
                        "123-45-6789": "[SSN_1]", "10.0.0.1": "[IP_ADDRESS_1]"}
    assert "Maria Rossi" in result.text and "Boston" in result.text  # a regex engine keeps names and places
    assert adapter.describe() == {"tool": "datafog", "version": importlib.metadata.version("datafog"), "engine": "regex",
                                  "entities": "all", "strategy": "token", "locale": "us"}


@pytest.mark.parametrize("strategy, email", [("mask", "*" * 23), ("pseudonymize", "[EMAIL_PSEUDO_1]")])
def test_strategies_write_what_datafog_writes(strategy, email):
    _, result = _run(f"datafog:,strategy={strategy}")
    assert check_reported(TEXT, result)["maria.rossi@example.com"] == email


def test_hash_and_entity_filter():
    adapter, result = _run("datafog:,strategy=hash,entities=EMAIL|SSN")
    replaced = check_reported(TEXT, result)
    assert set(replaced) == {"maria.rossi@example.com", "123-45-6789"}
    assert all(w.startswith("[EMAIL_") or w.startswith("[SSN_") for w in replaced.values())
    assert "+1 415 555 0132" in result.text and adapter.describe()["entities"] == ["EMAIL", "SSN"]


@pytest.mark.parametrize("args, line", [
    ("strategy=shred", "datafog: strategy must be one of token, mask, hash, pseudonymize, not 'shred'"),
    ("entities=EMAIL|NAME", "datafog: entities has unknown value(s) NAME; accepted (|-separated): EMAIL|PHONE"),
    ("locale=fr", "datafog: locale must be one of us, de, not 'fr'"),
    ("engine=spacy", "datafog: unknown argument(s) engine; accepted: entities, strategy, locale"),
])
def test_bad_arguments_are_one_line(args, line):
    with pytest.raises(ModelSpecError) as info:
        build_adapter(ModelSpec.parse(f"datafog:,{args}"))
    assert str(info.value).startswith(line) and "\n" not in str(info.value)


def test_missing_extra_says_what_to_install(monkeypatch):
    import privasis_bench.adapters.deid as deid

    real = importlib.util.find_spec
    monkeypatch.setattr(deid.importlib.util, "find_spec", lambda name, *a: None if name == "datafog" else real(name, *a))
    with pytest.raises(ModelSpecError, match=r"needs the 'datafog' package.*pip install 'privasis-bench\[datafog\]'"):
        build_adapter(ModelSpec.parse("datafog"))


def test_board_sentence():
    assert "rule-based" in board_descriptions()["datafog"]


def test_run_on_tab_sample_records_the_tool_and_what_it_wrote(tmp_path, monkeypatch, capsys):
    import json

    from cli_main import run_main

    code, out, err = run_main(["run", "-m", "datafog:,strategy=mask", "-t", "tab_sample", "-o", str(tmp_path / "run"),
                               "--no-progress", "--no-cache"], monkeypatch, capsys)
    assert code == 0, err
    task = tmp_path / "run" / "tab_sample"
    backend = json.loads((task / "results.json").read_text())["model"]["backend"]
    assert backend == {"tool": "datafog", "version": importlib.metadata.version("datafog"), "engine": "regex",
                       "entities": "all", "strategy": "mask", "locale": "us"}
    rows = [json.loads(line) for line in (task / "samples.jsonl").read_text().splitlines()]
    masked = [r for r in rows if r.get("masked_spans")]
    assert masked and all(r["span_source"] == "system" for r in rows)
    for row in masked:  # each replacement is the mask DataFog wrote over exactly that span
        assert [len(w) for w in row["replacements"]] == [e - s for s, e in row["masked_spans"]]
        assert set("".join(row["replacements"])) == {"*"}
    journal = [json.loads(line) for line in (task / "sanitized.jsonl").read_text().splitlines()]
    assert all(len(j["spans"]) == len(j["replacements"]) for j in journal)


def test_bad_argument_on_the_command_line_exits_2_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from cli_main import run_main

    code, out, err = run_main(["run", "-m", "datafog:,strategy=shred", "-t", "tab_sample", "-o", str(tmp_path / "run"),
                               "--no-progress", "--no-cache"], monkeypatch, capsys)
    assert code == 2 and "strategy must be one of token, mask, hash, pseudonymize, not 'shred'" in err
    assert "Traceback" not in out + err
    assert not [p for p in (tmp_path / "run").rglob("*") if p.is_file()]  # (the CLI may leave the empty -o directory)
