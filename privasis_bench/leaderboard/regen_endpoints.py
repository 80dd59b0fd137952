"""Where ``leaderboard verify --regenerate K`` may call a model it cannot run itself, and how it compares the answers.

The maintainer writes the endpoints file (``--regenerate-endpoints FILE``, YAML; docs/publishing.md, *Endpoints the
maintainer configures*, shows one); nothing in it ever comes from a submission. Each endpoint names the submitted
``model`` (spec or label) it stands for, the ``spec`` and ``args`` the verifier calls, and its ``rule``: ``exact``,
or ``similarity`` with a per-record ``threshold`` (:func:`similarity`: both texts NFKC, case folded, white space
collapsed, then rapidfuzz's normalised Indel similarity). A key is never written in the file: ``args.api_key`` is
refused, and ``api_key_env`` names the variable the adapter reads it from (only that name reaches the report).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from privasis_bench.errors import PrivasisError

RULES = ("exact", "similarity")
DEFAULT_THRESHOLD = 0.8  # see docs/publishing.md: what re-asking one llama.cpp server twice measured
_KEYS = {"model", "spec", "args", "rule", "threshold"}
_SECRET_ARGS = ("api_key",)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Endpoint:
    """One configured endpoint: which submitted model it stands for, what the verifier calls, the rule."""

    model: str
    spec: str
    args: Mapping[str, Any] = field(default_factory=dict)
    rule: str = "similarity"
    threshold: float = DEFAULT_THRESHOLD

    def describe_rule(self) -> str:
        """The rule in words, as the report and the board record it."""
        if self.rule == "exact":
            return f"exact: output from endpoint {self.spec} equal after the protocol's post-processing"
        return (f"similarity >= {self.threshold:.2f}: output from endpoint {self.spec}, NFKC, case folded, white space "
                "collapsed, rapidfuzz normalised Indel similarity per record")


def normalised(text: str) -> str:
    """The form the similarity rule compares: NFKC, case folded, white space runs made one space, trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def similarity(a: str, b: str) -> float:
    """Normalised Indel similarity of two texts in [0, 1] after :func:`normalised` (1: the same text)."""
    from rapidfuzz import fuzz

    return fuzz.ratio(normalised(a), normalised(b)) / 100.0


def load_endpoints(path: str | Path) -> dict[str, Endpoint]:
    """The endpoints file as {submitted model: endpoint}; one-line errors name the file and the field."""
    import yaml

    path = Path(path)
    try:
        body = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PrivasisError(f"{path}: cannot read the endpoints file ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise PrivasisError(f"{path}: not YAML ({str(exc).splitlines()[0]})") from None
    items = body.get("endpoints") if isinstance(body, dict) else None
    if not isinstance(items, list) or not items:
        raise PrivasisError(f"{path}: endpoints: expected a non-empty list of endpoints")
    found: dict[str, Endpoint] = {}
    for i, item in enumerate(items):
        where = f"{path}: endpoints[{i}]"
        endpoint = _endpoint(item, where)
        if endpoint.model in found:
            raise PrivasisError(f"{where}.model: {endpoint.model!r} is configured twice")
        found[endpoint.model] = endpoint
    return found


def _endpoint(item: Any, where: str) -> Endpoint:
    if not isinstance(item, dict):
        raise PrivasisError(f"{where}: expected a mapping with model, spec, args, rule, threshold")
    unknown = sorted(set(map(str, item)) - _KEYS)
    if unknown:
        raise PrivasisError(f"{where}: unknown field(s) {', '.join(unknown)} (expected {', '.join(sorted(_KEYS))})")
    for key in ("model", "spec"):
        if not isinstance(item.get(key), str) or ":" not in item[key]:
            raise PrivasisError(f"{where}.{key}: expected a model spec such as provider:model")
    args = item.get("args") or {}
    if not isinstance(args, dict):
        raise PrivasisError(f"{where}.args: expected a mapping")
    secret = [k for k in _SECRET_ARGS if k in args]
    if secret:
        raise PrivasisError(f"{where}.args.{secret[0]}: never write a key in the file; name its environment variable "
                            "with api_key_env")
    rule = item.get("rule", "similarity")
    if rule not in RULES:
        raise PrivasisError(f"{where}.rule: expected one of {', '.join(RULES)}, got {str(rule)[:40]!r}")
    threshold = item.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise PrivasisError(f"{where}.threshold: expected a number in (0, 1]")
    return Endpoint(model=item["model"], spec=item["spec"], args=dict(args), rule=rule, threshold=float(threshold))


def endpoint_for(results: Mapping[str, Any], endpoints: Mapping[str, Endpoint]) -> Endpoint | None:
    """The endpoint configured for an entry's model: by its spec (``provider:model``), else by its label."""
    model = results.get("model") if isinstance(results.get("model"), Mapping) else {}
    spec = model.get("spec") if isinstance(model.get("spec"), Mapping) else {}
    named = f"{spec.get('provider')}:{spec.get('model')}" if spec.get("provider") else None
    for key in (named, model.get("label")):
        if isinstance(key, str) and key in endpoints:
            return endpoints[key]
    return None
