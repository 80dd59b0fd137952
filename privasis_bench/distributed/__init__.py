"""The Ray executor (``--executor ray``): records become a Ray Dataset, each stage a ``map_batches`` step.

:mod:`~privasis_bench.distributed.cluster` connects to (or starts) a cluster and runs a chain of stages,
:mod:`~privasis_bench.distributed.shards` gives each batch its own response-cache shard that the driver merges
into the main cache, :mod:`~privasis_bench.distributed.workers` builds a worker's engine (one or many base URLs,
or an in-process engine on a GPU), :mod:`~privasis_bench.distributed.evaluation` runs the sanitize and judge
stages of ``run`` / ``evaluate`` and :mod:`~privasis_bench.distributed.recipes` the batches of ``build-corpus``
and ``generate`` (drafts ahead on a stage, batches finished in order by one actor), and
:mod:`~privasis_bench.distributed.nodes` watches the cluster's nodes while stages run (a lost node is told in one
line; a run no live node can host stops in one line).
The driver always finishes with the local code path, which then reuses every answer and verdict.

Nothing here imports ``ray`` at module level: only asking for ``--executor ray`` does. It may import data, tasks,
adapters, engine, protocol, results, pipeline and recipes; only the cli imports it.
"""
