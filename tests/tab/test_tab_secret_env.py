"""A task may point ``data_dir_env`` at any environment variable, a secret included: the error line about a missing
TAB data file names the variable and never prints its value (issue 51, item 7)."""

from __future__ import annotations

from pathlib import Path

from cli_main import run_main

TASKS = Path(__file__).resolve().parents[2] / "tasks"
SECRET = "sk-test-0123456789abcdefSECRETVALUE"


def _task(tmp_path: Path) -> Path:
    yaml = tmp_path / "tab_secret.yaml"
    yaml.write_text(f"task: tab_secret\ninclude: {TASKS / '_tab_base.yaml'}\ndataset:\n  path: NorskRegnesentral/text-anonymization-benchmark\n  name: echr_dev.json\n  split: dev\n"
                    "scorer_args:\n  data_file_name: echr_dev.json\n  data_dir_env: OPENAI_API_KEY\n", encoding="utf-8")
    return yaml


def test_a_secret_named_as_data_dir_env_is_never_printed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    masks = tmp_path / "masks.json"
    masks.write_text("{}", encoding="utf-8")
    code, out, err = run_main(["evaluate", "-t", str(_task(tmp_path)), "-p", str(masks), "-o", str(tmp_path / "run"),
                               "--bootstrap-samples", "0", "--no-progress"], monkeypatch, capsys)
    assert code != 0
    assert "$OPENAI_API_KEY" in err and "echr_dev.json" in err, err  # the variable and the file are named
    assert SECRET not in out + err
    assert "sk-test" not in out + err
    assert len(err.strip().splitlines()) == 1, err


def test_a_variable_naming_a_file_path_is_not_echoed_either(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "private-folder-name"
    folder.mkdir()
    monkeypatch.setenv("OPENAI_API_KEY", str(folder))
    code, out, err = run_main(["evaluate", "-t", str(_task(tmp_path)), "-p", str(tmp_path / "masks.json"), "-o",
                               str(tmp_path / "run"), "--bootstrap-samples", "0", "--no-progress"], monkeypatch, capsys)
    assert code != 0
    assert "private-folder-name" not in out + err, err


def test_the_hub_help_names_hf_home_without_its_value(monkeypatch):
    from privasis_bench.data.loading import _hub_help
    from privasis_bench.tasks.config import DatasetConfig

    monkeypatch.setenv("HF_HOME", "/home/someone/secret-cache-folder")
    line = _hub_help(DatasetConfig(path="org/data", split="test"), "offline")
    assert "HF_HOME" in line and "secret-cache-folder" not in line
