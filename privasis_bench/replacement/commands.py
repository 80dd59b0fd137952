"""``tab-background`` (background knowledge for TRIR, the paper's recipe) and ``replacement-chart`` (the
privacy-utility scatter of ``tab_replacement`` runs): the replacement family's own commands (declared in
:mod:`privasis_bench.replacement.family`; nothing in the package imports this module)."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from privasis_bench.errors import PrivasisError


def tab_background(
    protected: List[Path] = typer.Option(..., "--protected", help="TAB-schema JSON file(s) of the protected documents."),
    pool: List[Path] = typer.Option(..., "--pool", help="TAB-schema JSON file(s) of other rulings to draw the population from."),
    output: Path = typer.Option(..., "-o", "--output", help="Background-knowledge file to write (JSON Lines)."),
    factor: float = typer.Option(2.0, "--factor", min=1.0, max=1000.0, help="Population size as a multiple of the protected individuals (paper: 2)."),
    fraction: float = typer.Option(0.1, "--fraction", min=0.001, max=1.0, help="Share of each ruling's non-Procedure text kept (paper: 0.1)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the random draw of other individuals."),
) -> None:
    """Build TRIR background knowledge from local TAB-schema files (a random superset of the protected individuals)."""
    from privasis_bench.replacement.background import build_background_files, write_background

    docs = build_background_files([str(p) for p in protected], [str(p) for p in pool], factor=factor,
                                  fraction=fraction, seed=seed)
    write_background(output, docs)
    typer.echo(f"{len(docs)} background documents -> {output}")


def replacement_chart(
    runs: List[Path] = typer.Argument(..., help="Task folders of tab_replacement runs (each holding results.json)."),
    output: Path = typer.Option(..., "-o", "--output", help="SVG file to write."),
    published: bool = typer.Option(False, "--published", help="Also draw the paper's Table 3 (as published, apart)."),
) -> None:
    """Draw TRIR against TPS for tab_replacement runs (one point per run) as an SVG."""
    from privasis_bench.replacement.chart import scatter_svg
    from privasis_bench.replacement.published import published as paper

    points = []
    keys = set()
    for run in runs:
        path = run / "results.json"
        results = _read_results(path)
        m = results.get("metrics") or {}
        if not isinstance(m, dict) or m.get("scorer") != "tab_replacement" or m.get("tps") is None or m.get("trir") is None:
            raise PrivasisError(f"{path}: not a tab_replacement run with both TPS and TRIR")
        tps, trir = _share(path, "metrics.tps", m["tps"]), _share(path, "metrics.trir", m["trir"])
        keys.add(str(m.get("estimator_key")))
        model = results.get("model") if isinstance(results.get("model"), dict) else {}
        points.append((str(model.get("label") or model.get("key") or run.parent.name), trir, tps))
    if len(keys) > 1:
        raise PrivasisError(f"runs scored with different estimators ({', '.join(sorted(map(str, keys)))}) cannot share "
                            "one chart: their numbers are not comparable")
    shown = [(r["method"], r["trir"] / 100, r["tps"] / 100) for r in paper()["rows"]] if published else []
    output.write_text(scatter_svg(points, published=shown), encoding="utf-8")
    typer.echo(f"{len(points)} runs -> {output}")


def _read_results(path: Path) -> dict:
    from privasis_bench.fsutil import loads_json, read_text

    results = loads_json(read_text(path, "results file"), str(path))
    if not isinstance(results, dict):
        raise PrivasisError(f"{path}: expected a JSON object (a run's results.json), found a {type(results).__name__}")
    return results


def _share(path: Path, field: str, value: object) -> float:
    """A TPS or TRIR value: a number between 0 and 1 (a share), else one line naming the file and field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise PrivasisError(f"{path}: {field} must be a number between 0 and 1, not {shown}")
    return float(value)

