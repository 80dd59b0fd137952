"""``trir_variant: authors_code``: the re-identification classifier trained as the TRI authors' code trains it
(settings, windows, curation and the anonymised copy, masked-LM pre-training, best-epoch selection), on a tiny
local BERT so that it runs on the CPU in seconds."""

from __future__ import annotations

import json

import pytest

from privasis_bench.errors import TaskConfigError
from privasis_bench.replacement.settings import parse_settings, variants
from privasis_bench.replacement.tri_authors import TriOptions, overlapping_windows

BACKGROUND_ROWS = [
    ("anna", "Anna Berg is a violinist in Bergen who sued the orchestra over her dismissal."),
    ("anna", "The violinist from Bergen appealed to the Gulating High Court."),
    ("tomas", "Tomas Novak is a miner in Ostrava injured in a colliery explosion."),
    ("tomas", "The Ostrava miner claimed compensation from the colliery company."),
]
SANITIZED = ["[PERSON], a violinist in Bergen, sued the orchestra.", "A miner in Ostrava was injured in the colliery."]
TRUTH = ["anna", "tomas"]


def test_the_default_records_nothing_and_the_variant_takes_the_authors_defaults():
    default = parse_settings({}, "t.yaml")
    assert default.tri is None and default.trir_variant == "default" and variants(default) is None
    assert (default.classifier.epochs, default.classifier.learning_rate, default.classifier.max_length) == (10, 5e-4, 128)
    tri = parse_settings({"trir_variant": "authors_code"}, "t.yaml")
    assert tri.tri == TriOptions() and tri.tri.selection == "best" and tri.tri.pretraining_epochs == 3
    c = tri.classifier
    assert (c.epochs, c.learning_rate, c.batch_size, c.max_length) == (15, 5e-5, 16, 100)
    recorded = variants(tri)
    assert recorded["trir"] == "authors_code" and "tps" not in recorded
    assert recorded["source"].startswith("BenetManzanaresSalor/TextRe-Identification")
    # each step may be switched off, and a classifier_* key still wins over the authors' default
    off = parse_settings({"trir_variant": "authors_code", "classifier_pretraining_epochs": 0,
                          "classifier_curation": False, "classifier_anonymised_copy": False,
                          "classifier_selection": "last", "classifier_epochs": 10, "classifier_overlap": 0}, "t")
    assert off.tri == TriOptions(anonymised_copy=False, curation=False, pretraining_epochs=0, overlap=0,
                                 selection="last") and off.classifier.epochs == 10


def test_variant_authors_code_trains_the_classifier_the_authors_way_but_leaves_a_retrieval_attack_alone():
    every = parse_settings({"variant": "authors_code"}, "t")
    assert every.trir_variant == "authors_code" and every.tri is not None
    assert set(variants(every)) >= {"tps", "mlm", "nmi", "trir"} and ";" in variants(every)["source"]
    retrieval = parse_settings({"variant": "authors_code", "trir_attacker": "retrieval"}, "t")
    assert retrieval.trir_variant == "default" and retrieval.tri is None and "trir" not in variants(retrieval)
    assert "TextRe-Identification" not in variants(retrieval)["source"]


@pytest.mark.parametrize("args, field", [
    ({"trir_variant": "authors_code", "trir_attacker": "retrieval"}, "trir_variant"),
    ({"classifier_selection": "best"}, "classifier_selection"),  # a step of the authors' code needs the variant
    ({"trir_variant": "authors_code", "classifier_selection": "first"}, "classifier_selection"),
    ({"trir_variant": "authors_code", "classifier_curation": 1}, "classifier_curation"),
    ({"trir_variant": "authors_code", "classifier_overlap": 98}, "classifier_overlap"),
    ({"trir_variant": "authors_code", "classifier_pretraining_epochs": -1}, "classifier_pretraining_epochs"),
])
def test_a_bad_tri_setting_is_one_line_naming_the_key(args, field):
    with pytest.raises(TaskConfigError, match=f"scorer_args.{field}") as info:
        parse_settings(args, "t.yaml")
    assert "\n" not in str(info.value)


def test_windows_overlap_by_the_given_pieces_until_one_reaches_the_end():
    ids = list(range(10))
    assert overlapping_windows(ids, 6, 1, [100], [101]) == [[100, 0, 1, 2, 3, 101], [100, 3, 4, 5, 6, 101],
                                                            [100, 6, 7, 8, 9, 101]]
    assert overlapping_windows(ids[:4], 6, 1, [100], [101]) == [[100, 0, 1, 2, 3, 101]]
    assert overlapping_windows([], 6, 1, [100], [101]) == [[100, 101]]
    # the authors' fine-tuning windows: 98 pieces inside [CLS] ... [SEP], each starting 73 after the last
    starts = [w[1] for w in overlapping_windows(list(range(300)), 100, 25, [-1], [-2])]
    assert starts == [0, 73, 146, 219]


@pytest.mark.slow
def test_curation_and_the_anonymised_copy_follow_the_authors_steps():
    from privasis_bench.replacement.background import BackgroundDoc
    from privasis_bench.replacement.tri_pretreatment import Pretreatment

    treat = Pretreatment()
    anonymised = treat.anonymise("Anna Berg moved to Bergen in March 1996.")
    assert anonymised == "PERSON moved to ORG in DATE."  # the small pipeline takes Bergen for an ORG
    curated = treat.curate("The applicants were living in Oslo, (Norway) & paid €500.")
    assert curated.startswith(" ") and " The " not in curated and "live" in curated  # stop word out, lemma in
    assert not set("(),&€") & set(curated) and curated.endswith(".") and not curated.endswith(" .")
    docs = [BackgroundDoc("a", "Anna Berg lives in Bergen.")]
    both = treat.background(docs, copy=True, curate=False)
    assert [d.individual_id for d in both] == ["a", "a"] and both[0].text == docs[0].text and "PERSON" in both[1].text


def _attacker(tiny_bert, **options):
    from privasis_bench.replacement.classifier import ClassifierSettings
    from privasis_bench.replacement.tri_authors import AuthorsClassifierAttacker

    settings = ClassifierSettings(model=tiny_bert, epochs=6, learning_rate=3e-3, batch_size=4, max_length=32, seed=0)
    return AuthorsClassifierAttacker(settings, TriOptions(**{"pretraining_epochs": 1, "overlap": 4, **options}))


def test_best_epoch_selection_keeps_the_epoch_that_names_most_attacked_documents(tiny_bert):
    from privasis_bench.errors import PrivasisError
    from privasis_bench.replacement.background import BackgroundDoc

    attacker = _attacker(tiny_bert)
    attacker.fit([BackgroundDoc(i, t) for i, t in BACKGROUND_ROWS])
    assert len(attacker.training) == 2 * len(BACKGROUND_ROWS)  # the anonymised copy beside the original
    # the copy is curated too: its labels lemmatised ("PERSON" -> "person"), stop words out of both
    assert attacker.training[4].text == " person violinist GPE sue orchestra dismissal."
    assert all(" in " not in d.text for d in attacker.training)  # ("The" stays: their stop-word test is case-sensitive)
    with pytest.raises(PrivasisError, match="individuals must be given"):
        attacker.predict(SANITIZED)
    guesses = attacker.predict(SANITIZED + ["   "], TRUTH + ["anna"])
    assert guesses[2] is None and len(attacker.epoch_accuracy) == 6
    best = max(attacker.epoch_accuracy)
    assert attacker.kept_epoch == attacker.epoch_accuracy.index(best) + 1  # the first of the best
    # an empty document is not attacked (as the authors drop it): the kept epoch's accuracy is on the other two
    assert sum(g == t for g, t in zip(guesses, TRUTH)) / 2 == pytest.approx(best)
    described = attacker.describe()
    assert described["variant"] == "authors_code" and described["kept_epoch"] == attacker.kept_epoch
    assert described["pretraining_epochs"] == 1 and described["pretreatment"]["spacy_pipeline"]
    assert attacker.predict(SANITIZED + ["   "], TRUTH + ["anna"]) == guesses  # seeded: the same again


def test_pretraining_moves_the_encoder_and_the_classifier_starts_from_it(tiny_bert):
    import torch

    from privasis_bench.replacement.background import BackgroundDoc

    attacker = _attacker(tiny_bert, curation=False, anonymised_copy=False, selection="last")
    attacker.fit([BackgroundDoc(i, t) for i, t in BACKGROUND_ROWS])
    assert attacker.pretreatment is None and attacker.kept_epoch == 6 and not attacker.epoch_accuracy
    fresh = _attacker(tiny_bert, pretraining_epochs=0, selection="last")
    fresh.fit([BackgroundDoc(i, t) for i, t in BACKGROUND_ROWS])
    assert fresh.encoder_state is None
    key = "embeddings.word_embeddings.weight"
    from transformers import AutoModel

    checkpoint = AutoModel.from_pretrained(tiny_bert).state_dict()[key]
    assert not torch.equal(attacker.encoder_state[key], checkpoint)
    start = attacker._fresh_classifier().base_model.state_dict()[key]
    assert torch.equal(start, attacker.encoder_state[key])
    assert len(attacker.predict(SANITIZED)) == 2  # last-epoch selection needs no individuals


def test_a_run_with_trir_variant_records_it_and_the_kept_epoch(tmp_path, monkeypatch, capsys, tiny_bert):
    from cli_main import run_main
    from test_replacement_run import SAMPLE, _task

    task = _task(tmp_path)
    body = task.read_text(encoding="utf-8").replace(
        "trir_attacker: retrieval", f"trir_attacker: classifier\n  trir_variant: authors_code\n"
        f"  classifier_model: {tiny_bert}\n  classifier_epochs: 2\n  classifier_max_length: 32\n"
        f"  classifier_overlap: 4\n  classifier_pretraining_epochs: 1")
    task.write_text(body, encoding="utf-8")
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps({d["doc_id"]: {"output": d["text"], "replacements": []} for d in SAMPLE}),
                    encoding="utf-8")
    out = tmp_path / "out"
    code, o, e = run_main(["evaluate", "--tasks", str(task), "-t", "tab_replacement_fast", "-p", str(pred), "-o",
                           str(out), "--bootstrap-samples", "20"], monkeypatch, capsys)
    assert code == 0, o + e
    scorer = json.loads((out / "tab_replacement_fast" / "results.json").read_text(encoding="utf-8"))["scorer"]
    assert scorer["variant"]["trir"] == "authors_code" and "tps" not in scorer["variant"]
    trir = scorer["trir"]
    assert trir["variant"] == "authors_code" and trir["epochs"] == 2 and len(trir["epoch_accuracy"]) == 2
    assert trir["kept_epoch"] in (1, 2) and trir["training_documents"] > 0
