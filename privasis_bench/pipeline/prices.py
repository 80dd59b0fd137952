"""The price table ``run --plan`` reads (``--prices FILE``): what one million tokens cost, live and batched.

No price is built in: providers change them, and a gateway or a negotiated rate differs anyway. The file is YAML
(or JSON), one entry per model as ``provider:model`` (the label results use), in any one currency::

    openai:gpt-4.1-mini:
      input: 0.40          # per 1,000,000 prompt tokens, live
      output: 1.60         # per 1,000,000 completion tokens, live
      batch_input: 0.20    # the same through the provider's batch API (optional)
      batch_output: 0.80
    anthropic:claude-haiku-4-5:
      input: 1.00
      output: 5.00
      batch_discount: 0.5  # instead of batch_input/batch_output: batched price = live price x this factor

A model with no entry, or without batch prices, is shown without that cost. A malformed file is one line naming
the file and the field, exit 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import FileProblem, read_text

PER_TOKENS = 1_000_000
#: A price table lists a few hundred models at most; a file past this size is not one (and YAML reads it slowly).
MAX_PRICE_FILE_BYTES = 1_000_000
_FIELDS = ("input", "output", "batch_input", "batch_output", "batch_discount")


class PriceFileError(PrivasisError):
    """The price table cannot be read (exit 2)."""

    exit_code = 2


@dataclass(frozen=True)
class Price:
    """One model's prices per :data:`PER_TOKENS` tokens (batched ones None when the table gives none)."""

    input: float
    output: float
    batch_input: float | None = None
    batch_output: float | None = None

    def cost(self, prompt_tokens: int, output_tokens: int, *, batched: bool) -> float | None:
        """What these tokens cost, live or batched (None: no batched price known)."""
        pin, pout = (self.batch_input, self.batch_output) if batched else (self.input, self.output)
        if pin is None or pout is None:
            return None
        return (prompt_tokens * pin + output_tokens * pout) / PER_TOKENS


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except RecursionError:
        text = f"a deeply nested {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _number(path: Path, model: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise PriceFileError(f"{path}: {model}.{name} must be a non-negative finite number, not {_short(value)}")
    return float(value)


def load_prices(path: str | Path) -> dict[str, Price]:
    """Read a price table (see the module docstring); keys are ``provider:model``."""
    import yaml

    path = Path(path)
    try:
        text = read_text(path, "price table", max_bytes=MAX_PRICE_FILE_BYTES)
    except FileProblem as exc:
        raise PriceFileError(f"--prices {exc}") from None
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise PriceFileError(f"--prices {path}: not valid YAML/JSON ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise PriceFileError(f"--prices {path}: nested too deeply to be a price table (model: {{input, output}})") from None
    if not isinstance(data, dict) or not data:
        raise PriceFileError(f"--prices {path}: expected a mapping of provider:model to prices")
    table: dict[str, Price] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict):
            raise PriceFileError(f"{path}: {model}: expected input/output prices, not {_short(entry)}")
        unknown = sorted(set(entry) - set(_FIELDS))
        if unknown:
            raise PriceFileError(f"{path}: {model}: unknown field {unknown[0]!r}; accepted: {', '.join(_FIELDS)}")
        for need in ("input", "output"):
            if need not in entry:
                raise PriceFileError(f"{path}: {model}.{need} is missing (price per 1,000,000 tokens)")
        live_in, live_out = _number(path, model, "input", entry["input"]), _number(path, model, "output", entry["output"])
        b_in = b_out = None
        if "batch_discount" in entry:
            factor = _number(path, model, "batch_discount", entry["batch_discount"])
            if factor > 1:
                raise PriceFileError(f"{path}: {model}.batch_discount is the batched price's share of the live price, "
                                     f"between 0 and 1 (0.5 = half price), not {_short(entry['batch_discount'])}")
            b_in, b_out = live_in * factor, live_out * factor
        if "batch_input" in entry:
            b_in = _number(path, model, "batch_input", entry["batch_input"])
        if "batch_output" in entry:
            b_out = _number(path, model, "batch_output", entry["batch_output"])
        table[str(model)] = Price(live_in, live_out, b_in, b_out)
    return table
