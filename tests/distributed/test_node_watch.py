"""The node watch stops a run no live node can host through the driver's own control flow, never by a signal or by
ending the process: it works the same when SIGINT is ignored (a process started in the background by a shell).

No Ray here: a stand-in node table, and a driver script in a child process started with SIGINT ignored.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

DRIVER = textwrap.dedent('''
    import signal, sys, threading
    from privasis_bench.distributed import nodes
    from privasis_bench.errors import PrivasisError

    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # as for `cmd &` in a non-interactive shell
    nodes.POLL_S = 0.05
    calls = {"n": 0}

    class FakeRay:
        def nodes(self):
            calls["n"] += 1
            if calls["n"] == 3:
                raise ConnectionError("the node table did not answer")  # read again at the next poll
            worker = {"NodeID": "w" * 28, "Alive": calls["n"] < 5, "Resources": {"CPU": 1.0, "pb_worker": 1.0}}
            head = {"NodeID": "h" * 28, "Alive": True, "Resources": {"CPU": 2.0}}
            return [head, worker]

    def results():
        threading.Event().wait()  # Ray waiting for a node that never joins
        yield None

    try:
        with nodes.NodeWatch(FakeRay(), {"pb_worker": 1.0}, 1.0, wait_s=0.2) as watch:
            for _ in nodes.pump(results(), watch, step_s=0.05):
                pass
    except PrivasisError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        print("driver returned", flush=True)
        sys.exit(exc.exit_code)
''')


def test_a_driver_with_sigint_ignored_stops_through_its_own_control_flow_with_one_line():
    done = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert done.returncode == 1 and "driver returned" in done.stdout, done.stderr  # the driver's own exit path
    assert len(errors) == 1 and "no live node can host the stages" in errors[0] and "re-run" in errors[0], done.stderr
    assert "node wwwwwwwwwwww lost" in done.stderr and "Traceback" not in done.stderr
