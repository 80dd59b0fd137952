"""The judge-stage checkpoint: resumable, crash-tolerant, keyed by judge fingerprint and output."""

from __future__ import annotations

from privasis_bench.protocol.checkpoint import append_checkpoint, output_hash, read_checkpoint
from privasis_bench.protocol.verdicts import KeepVerdict, RecordVerdict, TargetVerdict


def verdict(rid, tier="sanitized"):
    return RecordVerdict(rid, "c", "t", False, [TargetVerdict("n", "drop", None, "v", tier=tier)], [KeepVerdict("k", "v", retained=True)])


def test_round_trip_skips_unjudged_truncated_and_foreign_lines(tmp_path):
    path = tmp_path / "judged.jsonl"
    sha = output_hash("out", False)
    append_checkpoint(path, "fp1", [(sha, verdict("a")), (sha, verdict("b", tier="unjudged"))])
    append_checkpoint(path, "fp2", [(sha, verdict("c"))])
    with open(path, "a") as fh:
        fh.write('{"judge": "fp1", "record_id": "d", "outp')  # a crash mid-line
    append_checkpoint(path, "fp1", [(sha, verdict("e"))])  # starts on a fresh line
    found = read_checkpoint(path, "fp1")
    assert sorted(found) == [("a", sha), ("e", sha)]
    assert found[("a", sha)].to_dict() == verdict("a").to_dict()
    assert read_checkpoint(tmp_path / "missing.jsonl", "fp1") == {}


def test_output_hash_distinguishes_failure_from_empty():
    assert output_hash("", False) != output_hash(None, True)
    assert output_hash("x", False) == output_hash("x", False)
