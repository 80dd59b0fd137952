"""What the command line shows of Privasis results (the family's ``report``): a line leading each incomplete run,
then one table of the judge protocol's metrics with the incomplete runs labelled so."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from privasis_bench.results.tables import summary_table

console = Console()


def print_report(results: list[dict]) -> None:
    """Print each incomplete run's lead line, then the metrics table of every run."""
    for res in results:  # an incomplete run leads with what is missing, before any number
        lead = incomplete_lead(res)
        if lead:
            console.print(f"[bold red]{escape(lead)}[/]", highlight=False, soft_wrap=True)
    console.print(summary_table([shown_results(r) for r in results]))


def _failed_unscored(res: dict) -> int:
    """Failed model outputs that the metrics count as empty outputs without the user having asked for it."""
    c = res["counts"]
    return c["failed_outputs"] if res["checks"]["failed_outputs"] != "scored_as_empty" else 0


def incomplete_lead(res: dict) -> str | None:
    """The line an incomplete run's report starts with (None for a complete run)."""
    if res.get("complete", True):
        return None
    c, name = res["counts"], res["task"]["name"]
    parts = [f"{n} {what}" for n, what in ((_failed_unscored(res), "failed model output(s)"),
                                            (c.get("unjudged", 0), "unjudged record(s)"),
                                            (c.get("missing_predictions", 0), "record(s) without a prediction")) if n]
    hidden = " (so no metric is shown)" if _failed_unscored(res) else ""
    return (f"INCOMPLETE: {name}: {', '.join(parts) or 'records missing'}{hidden}; "
            "these are not valid results (details below)")


def shown_results(res: dict) -> dict:
    """``res`` as the table shows it: an incomplete run is labelled so, and when failed model outputs would be
    counted as empty outputs (not asked for), its metrics are left out rather than shown as if valid."""
    if res.get("complete", True):
        return res
    model = dict(res.get("model", {}))
    model["label"] = f"{model.get('label', '?')} INCOMPLETE"
    shown = {**res, "model": model}
    if _failed_unscored(res):
        shown["metrics"] = {}
    return shown
