"""One multi-node Ray cluster for the whole test session (a head node and two worker nodes on 127.0.0.1, each its
own raylet and ports: ``tests/ray_nodes.py``); CLI drivers connect to its address and run on the head node.

Worker nodes offer the ``pb_worker`` resource: a command given ``--ray-resources pb_worker=1`` runs its stages on
them. Every process the nodes start is stopped at the end of the session, however it ends.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ray_cluster():
    """The running :class:`ray_nodes.LocalCluster` (the node-loss test removes worker nodes and adds new ones)."""
    pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    pytest.importorskip("psutil")
    from ray_nodes import local_cluster

    with local_cluster(worker_nodes=2) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def ray_address(ray_cluster) -> str:
    """The head node's GCS address (``--ray-address``)."""
    return ray_cluster.address
