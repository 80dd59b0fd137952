"""``--batch`` and its options (provider batch APIs for the model and/or the judge), for ``run``,
``evaluate`` (no model under test: ``--batch judge`` only) and ``sanitize`` (no judge: ``--batch model`` only)."""

from __future__ import annotations

from typing import Any, List, Optional

import typer

from privasis_bench.engine.batch_broker import BatchOptions
from privasis_bench.engine.batching import batch_roles
from privasis_bench.errors import PrivasisError

_DEFAULTS = BatchOptions()

BATCH_OPTIONS: dict[str, tuple[Any, Any]] = {
    "batch": (Optional[List[str]], typer.Option(
        None, "--batch", help="Send these roles' calls through the provider's batch API (about half price, answers "
        "within a day): model, judge, or any role a task family declares (comma-separated or repeated; sanitize "
        "has only a model, evaluate no model under test). openai: and anthropic: models.")),
    "batch_size": (int, typer.Option(_DEFAULTS.size, "--batch-size", min=1, max=100_000,
                                     help="Most requests in one batch (provider limits split further).")),
    "batch_max_wait": (float, typer.Option(_DEFAULTS.max_wait, "--batch-max-wait", min=0.0, max=86_400.0,
                                           help="Seconds the oldest waiting request waits before a partial batch is sent.")),
    "batch_quiet": (float, typer.Option(_DEFAULTS.quiet, "--batch-quiet", min=0.0, max=3_600.0,
                                        help="A partial batch is sent once no new request came for this many seconds.")),
    "batch_poll": (float, typer.Option(_DEFAULTS.poll, "--batch-poll", min=0.0, max=3_600.0,
                                       help="Seconds between status checks of a submitted batch.")),
    "batch_max_in_flight": (int, typer.Option(_DEFAULTS.max_in_flight, "--batch-max-in-flight", min=1, max=1_000,
                                              help="Batches out at once per role.")),
    "batch_detach": (bool, typer.Option(False, "--batch-detach", help="Exit once every pending request is in a "
                                        "submitted batch; the same command run later collects the answers.")),
    "batch_abandon": (bool, typer.Option(False, "--batch-abandon", help="Forget the batches an earlier --batch run "
                                         "left pending for this command's models (paid for; their requests are asked "
                                         "again). Without it, a run that would not collect them stops.")),
}


def batch_options(opts: Any, *, command: str = "", lacks: str | None = None) -> BatchOptions:
    """The :class:`BatchOptions` of a command (no roles when the command has no --batch).

    ``lacks``: the role ``command`` does not have (``sanitize`` has no judge, ``evaluate`` no model under test);
    naming it in --batch is then one line, exit 2, rather than an option silently ignored.
    """
    from privasis_bench.tasks.family import declared_roles

    roles = batch_roles(getattr(opts, "batch", None), ("model", *declared_roles()))
    abandon, cache_file = bool(getattr(opts, "batch_abandon", False)), _cache_file(opts)
    if lacks is not None and lacks in roles:
        other = "model" if lacks == "judge" else "judge"
        does = "only asks the model under test" if lacks == "judge" else "judges saved outputs, asking no model under test"
        raise PrivasisError(f"--batch {lacks}: {command} has no {lacks} (it {does}); use --batch {other}")
    judge = getattr(opts, "judge", None)
    if "judge" in roles and isinstance(judge, str) and judge.strip().lower() == "none":
        raise PrivasisError("--batch judge contradicts --judge none (no judge model is asked); drop one of them")
    if not roles:
        if getattr(opts, "batch_detach", False):
            raise PrivasisError("--batch-detach needs --batch ROLE (model, judge, ...)")
        return BatchOptions(abandon=abandon, cache_file=cache_file)
    return BatchOptions(roles=roles, size=opts.batch_size, max_wait=opts.batch_max_wait, quiet=opts.batch_quiet,
                        poll=opts.batch_poll, max_in_flight=opts.batch_max_in_flight, detach=opts.batch_detach,
                        abandon=abandon, cache_file=cache_file)


def _cache_file(opts: Any) -> str | None:
    """The response cache file the command's batches are recorded in (also under --no-cache, to find pending ones)."""
    from privasis_bench.engine.cache import CACHE_FILE_NAME, default_cache_dir

    if not hasattr(opts, "cache_dir"):
        return None
    return str((opts.cache_dir or default_cache_dir()) / CACHE_FILE_NAME)
