"""The node watch stops a run no live node can host, even when the driver does not stop on the interruption.

No Ray here: a stand-in node table, and a driver script in a child process (ending the process is part of what is
tested).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

DRIVER = textwrap.dedent('''
    import sys, time
    from privasis_bench.distributed import nodes

    nodes.POLL_S, nodes.GRACE_S = 0.05, 0.5
    calls = {"n": 0}

    class FakeRay:
        def nodes(self):
            calls["n"] += 1
            if calls["n"] == 3:
                raise ConnectionError("the node table did not answer")  # read again at the next poll
            worker = {"NodeID": "w" * 28, "Alive": calls["n"] < 5, "Resources": {"CPU": 1.0, "pb_worker": 1.0}}
            head = {"NodeID": "h" * 28, "Alive": True, "Resources": {"CPU": 2.0}}
            return [head, worker]

    watch = nodes.NodeWatch(FakeRay(), {"pb_worker": 1.0}, 1.0, wait_s=0.2)
    with watch:
        watch.waiting = MODE == "waiting"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                time.sleep(0.01)  # a driver that swallows the interruption (or never waits on Ray)
            except KeyboardInterrupt:
                print("swallowed", file=sys.stderr, flush=True)
    print("driver returned", flush=True)
''')


def _drive(mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", f"MODE = {mode!r}\n" + DRIVER], capture_output=True, text=True,
                          timeout=60)


def test_a_driver_that_swallows_the_interruption_is_ended_with_one_line():
    done = _drive("waiting")
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert done.returncode == 1 and "driver returned" not in done.stdout, done.stderr
    assert "swallowed" in done.stderr  # it was interrupted first
    assert len(errors) == 1 and "no live node can host the stages" in errors[0] and "re-run" in errors[0], done.stderr
    assert "node wwwwwwwwwwww lost" in done.stderr


def test_a_driver_that_never_waits_on_ray_is_ended_after_the_grace():
    done = _drive("busy")
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert done.returncode == 1 and "swallowed" not in done.stderr and len(errors) == 1, done.stderr
