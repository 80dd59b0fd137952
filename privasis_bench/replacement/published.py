"""The paper's own numbers (its Table 3 and the figures quoted in its text), shown apart as "as published".

They were computed with the paper's estimators on the full TAB test set, so they are never ranked with runs of
this harness (whose default estimators are the packaged ones, and whose sample is ten fictional documents).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PUBLISHED = Path(__file__).with_name("published_table3.json")


def published() -> dict[str, Any]:
    """The as-published data: source, setting, unit (percent) and one row per method."""
    return json.loads(PUBLISHED.read_text(encoding="utf-8"))
