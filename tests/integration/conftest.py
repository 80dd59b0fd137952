"""The integration tests' helpers, for the tests that import them from here.

The server fixtures live in ``servers.py``, a plugin of the whole suite (``tests/conftest.py``), so that one server of
each kind serves the integration tests and the doc-block tests in ``tests/docs_examples/``.
"""

from __future__ import annotations

try:  # works whether or not tests/ is a package
    from .servers import (
        IN_PROCESS_SMOLLM2,
        free_port,
        log_tail,
        offline_env,
        require_module,
        require_modules,
        unavailable,
    )
except ImportError:
    from servers import (  # type: ignore[no-redef]
        IN_PROCESS_SMOLLM2,
        free_port,
        log_tail,
        offline_env,
        require_module,
        require_modules,
        unavailable,
    )

__all__ = ["IN_PROCESS_SMOLLM2", "free_port", "log_tail", "offline_env", "require_module", "require_modules",
           "unavailable"]
