"""One local Ray cluster (127.0.0.1, 2 CPUs) for the whole test session; CLI drivers connect to its address."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ray_address():
    """The GCS address of a Ray cluster started by this test process (stopped at the end of the session)."""
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
