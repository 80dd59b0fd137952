"""The re-identification attacks on a two-individual background (both must succeed), the masked-LM estimator on
a tiny local BERT, and models that cannot be loaded offline (one line naming the model)."""

from __future__ import annotations

import pytest

from privasis_bench.errors import PrivasisError
from privasis_bench.replacement.background import BackgroundDoc
from privasis_bench.replacement.trir import RetrievalAttacker, trir

BACKGROUND = [
    BackgroundDoc("anna", "Anna Berg is a violinist in Bergen who sued the orchestra over her dismissal."),
    BackgroundDoc("anna", "The violinist from Bergen appealed to the Gulating High Court."),
    BackgroundDoc("tomas", "Tomas Novak is a miner in Ostrava injured in a colliery explosion."),
    BackgroundDoc("tomas", "The Ostrava miner claimed compensation from the colliery company."),
]
SANITIZED = ["[PERSON], a violinist in Bergen, sued the orchestra.", "A miner in Ostrava was injured in the colliery."]
TRUTH = ["anna", "tomas"]


def test_the_retrieval_attack_reidentifies_both_individuals():
    attacker = RetrievalAttacker()
    attacker.fit(BACKGROUND)
    assert trir(attacker.predict(SANITIZED), TRUTH) == 1.0
    assert attacker.predict(["nothing in common here"]) == [None]


def test_the_fine_tuned_classifier_reidentifies_both_individuals(tiny_bert):
    from privasis_bench.replacement.classifier import ClassifierAttacker, ClassifierSettings

    attacker = ClassifierAttacker(ClassifierSettings(model=tiny_bert, epochs=30, learning_rate=3e-3, batch_size=4,
                                                     max_length=32, seed=0))
    attacker.fit(BACKGROUND)
    assert trir(attacker.predict(SANITIZED), TRUTH) == 1.0
    assert attacker.describe()["epochs"] == 30 and attacker.describe()["individuals"] == 2


def test_the_masked_lm_estimator_reads_probabilities_with_alternating_masks(tiny_bert):
    from privasis_bench.replacement.mlm import MaskedLMEstimator

    estimator = MaskedLMEstimator(tiny_bert, spacing=2, window=16)
    text = "the applicant lives in oslo and works in bergen as a teacher"
    spans = [(4, 13), (23, 27), (42, 48), (54, 61)]
    probs = estimator.probabilities(text, spans)
    assert len(probs) == 4 and all(0.0 < p < 1.0 for p in probs)
    assert estimator.name.endswith("/N=2")


@pytest.mark.parametrize("what", ["mlm", "similarity", "classifier"])
def test_a_model_not_available_offline_fails_with_one_line_naming_it(what, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    name = "nobody/no-such-model"
    with pytest.raises(PrivasisError, match="nobody/no-such-model.*cannot be loaded offline") as info:
        if what == "mlm":
            from privasis_bench.replacement.mlm import load_masked_lm

            load_masked_lm(name)
        elif what == "similarity":
            from privasis_bench.replacement.similarity import SentenceModel

            SentenceModel(name)
        else:
            from privasis_bench.replacement.classifier import load_classifier

            load_classifier(name, 2)
    assert "\n" not in str(info.value)
