"""``--preset paper`` and the scoring-rule options of ``run`` and ``evaluate``.

``--empty-outputs`` and ``--inclusion-text`` name the two rules where the harness departs from the reference
evaluator by default (:mod:`privasis_bench.protocol.presets`). ``--preset paper`` sets every setting that matters
for comparability with the paper's Table 4 to the reference evaluator's value in one recorded switch; an option
given explicitly with another value is refused (exit 2) rather than silently overridden.
"""

from __future__ import annotations

import importlib
from typing import Any, Optional

import typer

from privasis_bench.errors import PrivasisError
from privasis_bench.protocol.presets import EMPTY_OUTPUT_RULES, INCLUSION_TEXTS, PRESETS, preset_values

PRESET_OPTIONS: dict[str, tuple[Any, Any]] = {
    "preset": (Optional[str], typer.Option(
        None, "--preset",
        help="paper: every setting that matters for comparability with the paper's Table 4 at the official "
             "evaluator's value (docs/reproducing.md); recorded as scoring_preset in results and submissions.")),
    "empty_outputs": (Optional[str], typer.Option(
        None, "--empty-outputs",
        help="Empty or whitespace-only model outputs: skip (default; scored without asking: nothing leaked, nothing "
             "retained, a departure from the official evaluator) or judge (shown to the judge like any text, "
             "the official rule). Recorded in results.")),
    "inclusion_text": (Optional[str], typer.Option(
        None, "--inclusion-text",
        help="Text put into the retention question: after-think (default; after the first </think>, a departure) "
             "or raw (the judged text as it is, the official rule). Recorded in results.")),
}
#: ``sanitize --preset paper``: the model's settings of the preset (empty and cut answers kept as they are, the
#: budget and temperature of the official client), so ``evaluate --preset paper`` judges what the official client read.
SANITIZE_PRESET_OPTIONS: dict[str, tuple[Any, Any]] = {
    "preset": (Optional[str], typer.Option(
        None, "--preset",
        help="paper: the model's settings of the paper's evaluator (empty and cut answers kept as they are, "
             "9,024 tokens, temperature 0; docs/reproducing.md); judge the outputs with evaluate --preset paper.")),
}

#: ``--option`` of the preset -> the attribute of ``opts`` holding it (None: a command parameter, handled apart).
_OPTS_NAMES = {
    "--instruction": "instruction", "--parse-mode": "parse_mode", "--empty-outputs": "empty_outputs",
    "--inclusion-text": "inclusion_text", "--empty-answers": "empty_answers",
    "--judge-truncated-answers": "judge_truncated_answers", "--truncated-answers": "truncated_answers",
    "--judge-guess-max-tokens": "judge_guess_max_tokens", "--judge-compare-max-tokens": "judge_compare_max_tokens",
}


def _context() -> Any:
    """The running command's click context (Typer may vendor its own click), or None."""
    for module in ("typer._click.globals", "click.globals"):
        try:
            found = importlib.import_module(module).get_current_context(silent=True)
        except (ImportError, AttributeError):
            continue
        if found is not None:
            return found
    return None


#: Options of the preset whose default is not None (without a click context, that value reads as not given).
_DEFAULTS = {"empty_answers": "retry", "judge_truncated_answers": "retry"}


def _given(name: str, current: Any) -> bool:
    """Was the option ``name`` (a parameter name) given on the command line or by the environment?"""
    ctx = _context()
    source = ctx.get_parameter_source(name) if ctx is not None else None
    if source is None:
        return current != _DEFAULTS.get(name)
    return getattr(source, "name", str(source)) not in ("DEFAULT", "DEFAULT_MAP")


def _settle(option: str, name: str, current: Any, value: Any, preset: str) -> Any:
    """The preset's value for one option, unless the command line gave a different one (then exit 2)."""
    if current is not None and current != value and _given(name, current):
        raise PrivasisError(f"{option} {current} contradicts --preset {preset}, which sets {option} {value}: drop "
                            f"one of them (docs/reproducing.md lists the preset's settings)")
    return value


def check_rule_options(opts: Any) -> None:
    """One-line errors for a bad ``--preset``, ``--empty-outputs`` or ``--inclusion-text``."""
    for option, value, allowed in (("--preset", opts.preset, tuple(PRESETS)),
                                   ("--empty-outputs", getattr(opts, "empty_outputs", None), EMPTY_OUTPUT_RULES),
                                   ("--inclusion-text", getattr(opts, "inclusion_text", None), INCLUSION_TEXTS)):
        if value is not None and value not in allowed:
            raise PrivasisError(f"{option} must be one of {', '.join(allowed)}, not {value!r}")


def apply_preset(opts: Any, *, max_tokens: int | None = None, temperature: float | None = None,
                 ) -> tuple[int | None, float | None]:
    """With ``--preset``: set the preset's values on ``opts``; returns the model's (max_tokens, temperature).

    Without a preset nothing changes. Options the command line gave with another value are refused. A command
    without the judge's options (``sanitize``) gets the settings of the model under test only.
    """
    check_rule_options(opts)
    if opts.preset is None:
        return max_tokens, temperature
    judge = getattr(opts, "judge", None)  # sanitize has no judge to refuse
    if isinstance(judge, str) and judge.strip().lower() == "none":
        raise PrivasisError(f"--preset {opts.preset} needs a judge model: the paper's scoring asks one, so --judge none "
                            "cannot be recorded as the preset (drop --preset, or name a judge with --judge SPEC)")
    values = preset_values(opts.preset)
    for option, name in _OPTS_NAMES.items():
        if option in values and hasattr(opts, name):
            setattr(opts, name, _settle(option, name, getattr(opts, name), values[option], opts.preset))
    max_tokens = _settle("--max-tokens", "max_tokens", max_tokens, values["--max-tokens"], opts.preset)
    temperature = _settle("--temperature", "temperature", temperature, values["--temperature"], opts.preset)
    return max_tokens, temperature


def refuse_unreproducible(outputs: Any, preset: str, where: Any) -> None:
    """Under ``--preset``, saved outputs that failed because every answer was cut at the token budget are refused.

    The paper's client reads a cut answer as it is; a failed output keeps no text, so judging it as ``""``
    (``--score-failed-as-empty``) would silently differ. Other failed outputs are what that client reads as ``""``.
    """
    from privasis_bench.adapters.base import is_cut_failure

    cut = [o.id for o in outputs.values() if not o.ok and is_cut_failure(o.error)]
    if cut:
        raise PrivasisError(f"{where}: {len(cut)} output(s) failed because every answer was cut at the token budget "
                            f"(e.g. record {cut[0]}); the paper's evaluator reads cut answers as they are, which these "
                            f"lines do not keep: produce the outputs with `sanitize --preset {preset}` (it keeps cut "
                            "answers) and evaluate those")
