"""Connecting to a Ray cluster and running a chain of ``map_batches`` stages over pickled batches.

``ray`` is imported only inside these functions, so the package imports without it; without it installed,
:func:`require_ray` fails with one line telling how to install the extra. Each dataset row is one batch (a
pickled typed object), so a batch is exactly what the local executor would have built, and Ray Data keeps the
input order (``preserve_order``) while batches run in parallel.
"""

from __future__ import annotations

import logging
import math
import pickle
import socket
import sys
from dataclasses import dataclass
from typing import Any, Generator, Sequence

from privasis_bench.distributed.nodes import NodeWatch, pump
from privasis_bench.errors import PrivasisError

INSTALL_HINT = "--executor ray needs Ray: pip install 'privasis-bench[ray]' (or pip install 'ray[data]')"
EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class RayOptions:
    """How the Ray executor runs: where the cluster is and how each stage's workers are sized.

    ``workers``: actors per stage; ``batch_size``: records per batch (``None``: the command's own);
    ``cpus_per_worker``: CPUs reserved per actor (model calls are I/O-bound, so a fraction by default);
    ``gpus_per_worker`` > 0 puts in-process engines (``vllm:...``) on GPU workers, one per actor;
    ``base_urls`` / ``judge_base_urls``: OpenAI-compatible endpoints a worker's calls are spread over;
    ``resources``: custom node resources each actor reserves (``ray start --resources``), which pins the stages to
    the nodes that offer them (e.g. worker nodes, not the head that runs the driver); ``node_wait_s``: how long a
    run waits, once no live node can host the stages, before it stops (see :mod:`~privasis_bench.distributed.nodes`).
    """

    address: str | None = None  # None: start a local cluster
    workers: int = 2
    batch_size: int | None = None
    cpus_per_worker: float = 0.5
    gpus_per_worker: float = 0.0
    base_urls: tuple[str, ...] = ()
    judge_base_urls: tuple[str, ...] = ()
    num_cpus: int | None = None  # of a local cluster (None: every CPU)
    resources: tuple[tuple[str, float], ...] = ()
    node_wait_s: float = 60.0  # after losing nodes, how long to wait for one that can host the stages

    def actor_resources(self) -> dict[str, float] | None:
        """The custom resources of each actor as Ray takes them (None: none asked)."""
        return dict(self.resources) or None


def parse_resources(text: str | None) -> tuple[tuple[str, float], ...]:
    """``NAME=AMOUNT,NAME=AMOUNT`` as pairs; a one-line error naming ``--ray-resources`` and the bad part."""
    pairs = []
    for part in (p.strip() for p in (text or "").split(",")):
        if not part:
            continue
        name, sep, amount = part.partition("=")
        try:
            value = float(amount) if sep else -1.0
        except ValueError:
            value = -1.0
        if not name.strip() or not math.isfinite(value) or value <= 0 or name.strip() in ("CPU", "GPU", "memory", "object_store_memory"):
            raise PrivasisError(f"--ray-resources: {part!r} is not NAME=AMOUNT with a custom resource name and a finite "
                                "amount > 0 (e.g. --ray-resources pb_worker=1; CPUs and GPUs have their own options)")
        pairs.append((name.strip(), value))
    return tuple(pairs)


def check_base_urls(option: str, urls: Sequence[str]) -> None:
    """One-line error naming ``option`` when one of ``urls`` is not an ``http(s)://host[:port][/path]`` URL."""
    from urllib.parse import urlsplit

    for url in urls:
        try:
            parts = urlsplit(url)
            port_ok = parts.port is None or 0 < parts.port < 65536
        except ValueError:
            parts, port_ok = None, False
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
            raise PrivasisError(f"{option}: {url!r} is not an http(s) URL of an OpenAI-compatible server "
                                "(e.g. http://10.0.0.5:8000/v1; several comma-separated)")


def probe_address(address: str | None, timeout_s: float = 5.0) -> None:
    """One-line error when nothing listens at a ``HOST:PORT`` Ray address (``ray.init`` would retry it for ever)."""
    if not address or address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise PrivasisError(f"--ray-address: {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379, the address "
                            "`ray start --head` prints), ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise PrivasisError(f"--ray-address {address}: no Ray cluster answers there ({reason}); start one with "
                            "`ray start --head` or give the address it prints") from None


def check_gpus(ray: Any, options: RayOptions) -> None:
    """One-line error when actors ask for GPUs and no node of the cluster has that many (they would wait forever)."""
    if options.gpus_per_worker <= 0:
        return
    per_node = [float((n.get("Resources") or {}).get("GPU", 0.0)) for n in ray.nodes() if n.get("Alive")]
    best = max(per_node, default=0.0)
    if best < options.gpus_per_worker:
        raise PrivasisError(f"--ray-gpus-per-worker {options.gpus_per_worker:g}: no node of the cluster has that many GPUs "
                            f"(most on one node: {best:g}); use 0 for models served over HTTP, or add GPU nodes")


def check_resources(ray: Any, options: RayOptions) -> None:
    """One-line error when no node of the cluster offers a custom resource the actors ask for (they would wait forever)."""
    if not options.resources:
        return
    offered = ray.cluster_resources()
    for name, amount in options.resources:
        if offered.get(name, 0.0) < amount:
            custom = sorted(k for k in offered if k not in ("CPU", "GPU", "memory", "object_store_memory")
                            and not k.startswith("node:") and not k.startswith("accelerator_type:"))
            raise PrivasisError(f"--ray-resources: no node of the cluster offers {amount:g} of {name!r} (custom resources "
                                f"offered: {', '.join(custom) or 'none'}); start the worker nodes with "
                                f"ray start --resources '{{\"{name}\": N}}'")


def check_executor(name: str) -> None:
    """One-line error for an unknown ``--executor`` value."""
    if name not in EXECUTORS:
        raise PrivasisError(f"--executor must be one of {', '.join(EXECUTORS)}, not {name!r}")


def require_ray() -> Any:
    """The ``ray`` module, or a one-line error telling how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data ships in the same wheel but needs its own extras (pyarrow, pandas)
    except ImportError:
        raise PrivasisError(INSTALL_HINT) from None
    return ray


def connect(options: RayOptions) -> Any:
    """Connect to ``options.address`` (or start a local cluster) once per process; returns the ``ray`` module."""
    ray = require_ray()
    if not ray.is_initialized():
        probe_address(options.address)
        kwargs: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False, "ignore_reinit_error": True}
        if options.address:
            kwargs["address"] = options.address
        else:
            kwargs.update(address="local", include_dashboard=False, num_cpus=options.num_cpus)
        try:
            ray.init(**kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = options.address or "a local cluster"
            raise PrivasisError(f"--ray-address: cannot connect to {where}: {str(exc).splitlines()[0]}") from None
    logging.getLogger("ray.data").setLevel(logging.WARNING)  # no per-dataset INFO lines on the console
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # batches land in input order, as the local executor writes them
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    return ray


def node_id() -> str:
    """The Ray node this process runs on (the driver's, or a worker's inside a stage)."""
    import ray

    return str(ray.get_runtime_context().get_node_id())


def report_placement(driver: str, stages: dict[str, set[str]]) -> None:
    """One console line (stderr) telling which nodes ran the driver and each stage, by short node ids."""
    parts = [f"{name} on {len(ids)} node{'s' if len(ids) != 1 else ''} ({', '.join(sorted(i[:12] for i in ids))})"
             for name, ids in stages.items() if ids]
    if parts:
        print(f"ray: driver on node {driver[:12]}; {'; '.join(parts)}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Stage:
    """One ``map_batches`` step: a callable class built once per actor from ``kwargs``, sized by ``options``."""

    cls: type
    kwargs: dict[str, Any]
    gpus: float = 0.0


def run_stages(options: RayOptions, batches: Sequence[Any], stages: Sequence[Stage]) -> Generator[Any, None, None]:
    """Run every batch through ``stages`` on the cluster; yields each batch's final object in input order.

    A worker that dies (or its node) is restarted by Ray and its batch run again; an exception raised by a stage
    stops the run and is re-raised here as the original error when it is one of ours (one line), else as one line;
    a run no live node can host any more stops with :class:`~privasis_bench.distributed.nodes.NodesLostError`.
    """
    if not batches:
        return
    ray = connect(options)
    check_resources(ray, options)
    check_gpus(ray, options)
    items = [{"payload": pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL)} for b in batches]
    ds = ray.data.from_items(items, override_num_blocks=len(items))
    for stage in stages:
        ds = ds.map_batches(stage.cls, batch_size=1, compute=ray.data.ActorPoolStrategy(size=max(1, options.workers)),
                            num_cpus=options.cpus_per_worker, resources=options.actor_resources(),
                            num_gpus=stage.gpus or None, fn_constructor_kwargs=stage.kwargs, batch_format="numpy")
    with NodeWatch(ray, options.actor_resources() or {}, options.cpus_per_worker, options.node_wait_s) as watch:
        rows = pump(iter(ds.iter_rows()), watch)
        while True:
            try:
                row = next(rows)
            except StopIteration:
                return
            except PrivasisError:  # ours from a stage, or NodesLostError from the watch
                raise
            except Exception as exc:  # noqa: BLE001 - a failure of Ray itself, or of a worker outside a batch
                raise ray_error(exc) from None
            yield landed(row["payload"])


def landed(payload: bytes) -> Any:
    """What a stage sent back for one batch, unpickled; a :class:`StageFailure` is raised here as its error."""
    item = pickle.loads(payload)
    if isinstance(item, StageFailure):
        raise item.error()
    return item


@dataclass(frozen=True)
class StageFailure:
    """What a stage sends on instead of a batch when processing it raised: the error, re-raised by the driver."""

    stage: str
    original: PrivasisError | None
    message: str

    def error(self) -> PrivasisError:
        """Our own error as it was raised on the worker, else one line naming the stage and the cause."""
        if self.original is not None:
            return self.original
        if self.stage.endswith(":ours"):
            return PrivasisError(self.message)  # one of ours that does not travel as itself (same one line)
        return PrivasisError(f"ray executor: stage {self.stage} failed: {self.message}")


def _picklable(exc: PrivasisError) -> PrivasisError | None:
    """``exc`` if it survives pickling (some errors take extra constructor arguments), else None."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001
        return None
    return exc


def ray_error(exc: BaseException) -> BaseException:
    """The first :class:`PrivasisError` behind a Ray error, or a one-line error naming the cause."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        cur = todo.pop()
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, PrivasisError):
            return cur
        todo += [getattr(cur, "cause", None), cur.__cause__, cur.__context__]
    first = next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
    return PrivasisError(f"ray executor: a stage failed: {first}")


class BatchStage:
    """Base of the stage classes: unpickles each batch, hands it to :meth:`run`, pickles what comes back."""

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[bytes]]:
        """Ray Data's entry point: one dataset row (one batch) per call; a failure travels on to the driver."""
        return {"payload": [self.run_pickled(blob) for blob in batch["payload"]]}

    def run_pickled(self, payload: bytes) -> bytes:
        """One pickled batch in, what :meth:`run` made of it (or a :class:`StageFailure`) pickled out."""
        return pickle.dumps(self._one(pickle.loads(payload)), protocol=pickle.HIGHEST_PROTOCOL)

    def _one(self, item: Any) -> Any:
        if isinstance(item, StageFailure):
            return item  # an earlier stage failed on this batch
        try:
            return self.run(item)
        except PrivasisError as exc:
            return StageFailure(type(self).__name__ + ":ours", _picklable(exc), str(exc))
        except Exception as exc:  # noqa: BLE001 - reported by the driver in one line
            return StageFailure(type(self).__name__, None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")

    def run(self, item: Any) -> Any:  # pragma: no cover - overridden
        """Process one batch."""
        raise NotImplementedError
