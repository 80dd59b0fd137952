"""``--role ROLE=SPEC``: the models of the roles a task family asks besides the model under test.

A family declares its roles (``FamilySpec.roles``: ``judge`` for the Privasis protocol, none for TAB, e.g.
``attacker``); each is given on the command line as ``--role ROLE=provider:model[,k=v...]``, ``--judge`` being the
judge role's alias. The runner builds one engine per declared role and hands them to the family's scorer.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import PrivasisError
from privasis_bench.pipeline.scorers import family_of


def role_specs(opts: Any, tasks: list[Any]) -> dict[str, str]:
    """The ``--role`` values by role, checked against the roles the tasks' families declare; ``--role judge=SPEC``
    fills ``--judge`` (both at once is one line)."""
    given: dict[str, str] = {}
    for value in getattr(opts, "role", None) or []:
        role, sep, spec = value.partition("=")
        role, spec = role.strip(), spec.strip()
        if not sep or not role or not spec:
            raise PrivasisError(f"--role {value!r}: expected ROLE=provider:model (e.g. --role attacker=openai:gpt-4.1)")
        if role in given:
            raise PrivasisError(f"--role {role} is given twice")
        given[role] = spec
    declared = {r for task in tasks for r in family_of(task).roles}
    unknown = sorted(set(given) - declared - {"judge"})
    if unknown:
        raise PrivasisError(f"--role {unknown[0]}: no task of this command asks that role (their families ask: "
                            f"{', '.join(sorted(declared)) or 'none'})")
    if "judge" in given:
        if opts.judge is not None and opts.judge != given["judge"]:
            raise PrivasisError("--judge and --role judge=... name two judges; give one")
        opts.judge = given["judge"]
    return given


def role_models(setup: Any, opts: Any, given: dict[str, str]) -> dict[str, ModelSpec]:
    """The model of every role the task's family declares: a judge its scorer resolved from the task (``setup.choice``:
    the task's own unless ``--judge`` named another; none with ``--judge none``), else ``--judge`` / ``--role``; one
    line for a missing role."""
    if setup.choice is not None:
        return {"judge": setup.choice.spec} if setup.choice.spec is not None else {}
    family = family_of(setup.task)
    specs: dict[str, ModelSpec] = {}
    for role in family.roles:
        spec = opts.judge if role == "judge" else given.get(role)
        if role == "judge" and spec in (None, "none"):
            continue
        if not spec:
            raise PrivasisError(f"task {setup.task.task} (family {family.name}) asks the {role} role: pass "
                                f"--role {role}=provider:model")
        specs[role] = ModelSpec.parse(spec, opts.judge_args if role == "judge" else None)
    return specs


def task_roles(setup: Any, opts: Any, session: Any, given: dict[str, str]) -> dict[str, Any]:
    """One engine per role of the task (see :func:`role_models`), built by the command's session."""
    return {role: session.engine(spec, role) for role, spec in role_models(setup, opts, given).items()}

