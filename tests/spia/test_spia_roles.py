"""results.json names the model of every role (generic, every family), without secrets or hosts; the verified track
pins the family's declared roles (SPIA's adversary and matcher) as it pins the judge."""

from __future__ import annotations

import json
from types import SimpleNamespace

import jsonschema

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.leaderboard.provenance import role_pin_problems
from privasis_bench.pipeline.run import role_models
from privasis_bench.results.schema import BUILTIN, load_schema
from privasis_bench.spia.family import FAMILY, PINNED_ROLES


def _engine(role: str, spec: str) -> SimpleNamespace:
    return SimpleNamespace(role=role, spec=ModelSpec.parse(spec))


def test_every_engine_is_recorded_by_role_without_secret_or_host():
    roles = role_models([_engine("model", "openai:gpt-x,api_key=sk-SECRET123,base_url=http://10.0.0.7:8000/v1"),
                         _engine("adversary", "llamacpp:smollm2,replicas=2"),
                         _engine("judge", "anthropic:claude-x,temperature=0.5")])
    assert list(roles) == ["adversary", "judge", "model"]
    assert roles["model"] == {"label": "openai:gpt-x", "key": "openai:gpt-x"}
    assert roles["adversary"]["key"] == "llamacpp:smollm2" and "temperature" in roles["judge"]["key"]
    assert "SECRET" not in json.dumps(roles) and "10.0.0.7" not in json.dumps(roles)


def test_the_roles_field_is_typed_by_every_results_schema():
    good = {"adversary": {"label": "llamacpp:smollm2", "key": "llamacpp:smollm2"}}
    bad = {"adversary": {"label": "x", "key": "x", "api_key": "sk-1"}}
    for version, where in ((FAMILY.schema_versions["results"], str(FAMILY.extra["schema_dir"])),
                           ("results-1", BUILTIN), ("tab-results-1", BUILTIN), ("replacement-results-1", BUILTIN)):
        roles = load_schema(version, where)["properties"]["roles"]
        assert "roles" not in load_schema(version, where)["required"]  # files written before it still validate
        assert not list(jsonschema.Draft202012Validator(roles).iter_errors(good))
        assert list(jsonschema.Draft202012Validator(roles).iter_errors(bad)), version


def test_the_verified_track_pins_spia_adversary_and_matcher():
    assert FAMILY.extra["pinned_roles"] == PINNED_ROLES
    base = {"scorer": {"name": "spia"}}
    pinned = {r: {"label": s, "key": ModelSpec.parse(s).cache_identity()} for r, s in PINNED_ROLES.items()}
    assert role_pin_problems({**base, "roles": {**pinned, "model": {"label": "identity", "key": "identity:"}}}) == []
    other = {**pinned, "adversary": {"label": "openai:gpt-4.1", "key": "openai:gpt-4.1"}}
    assert role_pin_problems({**base, "roles": other}) == [
        "the adversary is 'openai:gpt-4.1', the verified track pins 'llamacpp:smollm2'"]
    assert [p.split(" is ")[0] for p in role_pin_problems(base)] == ["roles.adversary", "roles.matcher"]
    assert role_pin_problems({"scorer": {"name": "tab"}}) == []  # a family that pins no role
