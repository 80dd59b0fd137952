"""``--executor local|ray`` and the Ray executor's options (shared by run, evaluate, generate and build-corpus)."""

from __future__ import annotations

from typing import Any, Optional

import typer

from privasis_bench.cli.options import Opts, split_multi
from privasis_bench.cli.value_checks import check_finite
from privasis_bench.distributed.cluster import (
    RayOptions,
    check_base_urls,
    check_executor,
    check_gpus,
    connect,
    parse_resources,
    probe_address,
    require_ray,
)

#: name -> (annotation, typer option), added to a command with :func:`~privasis_bench.cli.options.with_options`.
EXECUTOR_OPTIONS: dict[str, tuple[Any, Any]] = {
    "executor": (str, typer.Option("local", "--executor", help="Where model calls run: local (this process) or ray (a Ray cluster; pip install 'privasis-bench\\[ray]').")),
    "ray_address": (Optional[str], typer.Option(None, "--ray-address", help="Ray cluster to use (e.g. 10.0.0.5:6379 after `ray start --head`); default: start a local one.")),
    "ray_workers": (int, typer.Option(2, "--ray-workers", min=1, help="Ray actors per stage; each keeps --concurrency requests in flight.")),
    "ray_batch_size": (Optional[int], typer.Option(None, "--ray-batch-size", min=1, help="Records per Ray batch for run/evaluate (default 16; recipes use --batch-size).")),
    "ray_cpus_per_worker": (float, typer.Option(0.5, "--ray-cpus-per-worker", min=0.0, help="CPUs Ray reserves per actor (model calls over HTTP need little).")),
    "ray_gpus_per_worker": (float, typer.Option(0.0, "--ray-gpus-per-worker", min=0.0, help="GPUs per actor of the model stage: > 0 loads an in-process engine (e.g. -m vllm:MODEL) in each actor on its own GPU.")),
    "ray_base_urls": (Optional[str], typer.Option(None, "--ray-base-urls", help="OpenAI-compatible base URLs (comma-separated) each worker spreads the model's calls over, round-robin.")),
    "ray_judge_base_urls": (Optional[str], typer.Option(None, "--ray-judge-base-urls", help="The same for the judge's calls.")),
    "ray_node_wait": (float, typer.Option(60.0, "--ray-node-wait", min=0.0, help="After nodes are lost, seconds to wait for a live node that can host the stages before stopping the run (finished batches are kept; re-run to resume).")),
    "ray_resources": (Optional[str], typer.Option(None, "--ray-resources", help="Custom node resources each actor reserves, NAME=AMOUNT comma-separated (e.g. pb_worker=1 with worker nodes started by ray start --resources '{\"pb_worker\": 4}'): puts the stages on those nodes.")),
}


def ray_options(opts: Opts) -> RayOptions | None:
    """The Ray executor's settings, or None for ``--executor local``.

    Every value is checked here, before anything is written or any worker starts: one line naming the option and
    what is accepted (also without Ray installed), a ``--ray-address`` nothing listens at, and GPUs per actor that
    no node has (Ray would wait for such a node for ever).
    """
    check_executor(opts.executor)
    if opts.executor != "ray":
        return None
    resources = parse_resources(opts.ray_resources)
    for option, value in (("--ray-cpus-per-worker", opts.ray_cpus_per_worker), ("--ray-gpus-per-worker", opts.ray_gpus_per_worker),
                          ("--ray-node-wait", opts.ray_node_wait)):
        check_finite(option, value)
    base_urls = tuple(split_multi([opts.ray_base_urls] if opts.ray_base_urls else []))
    judge_base_urls = tuple(split_multi([opts.ray_judge_base_urls] if opts.ray_judge_base_urls else []))
    check_base_urls("--ray-base-urls", base_urls)
    check_base_urls("--ray-judge-base-urls", judge_base_urls)
    require_ray()
    probe_address(opts.ray_address)
    options = RayOptions(address=opts.ray_address, workers=opts.ray_workers, batch_size=opts.ray_batch_size,
                         cpus_per_worker=opts.ray_cpus_per_worker, gpus_per_worker=opts.ray_gpus_per_worker,
                         base_urls=base_urls, judge_base_urls=judge_base_urls, resources=resources,
                         node_wait_s=opts.ray_node_wait)
    if options.gpus_per_worker > 0:
        check_gpus(connect(options), options)
    return options
