"""Validate Every Eval Ever files with the every-eval-ever package and read them back (run with its Python).

    python eee_check.py ROOT FILE [FILE ...]

Runs under a Python that has ``every-eval-ever`` (3.12 or newer) and imports nothing from privasis-bench. For the
given files (paths relative to ROOT, the datastore's parent) it prints one JSON object: the package's own
validation report (``every_eval_ever validate --format json``), every aggregate record read back through its
pydantic model (``EvaluationLog``: each result's score and interval, the judges' model ids and whether the judge
prompt is there), every instance file read back through ``InstanceLevelEvaluationLog``, and whether each sidecar's
sha256 and row count match what its aggregate record says.
"""

import hashlib
import json
import subprocess
import sys
from pathlib import Path


def main(root: str, files: list[str]) -> dict:
    from every_eval_ever.eval_types import EvaluationLog
    from every_eval_ever.instance_level_types import InstanceLevelEvaluationLog

    cli = Path(sys.executable).with_name("every_eval_ever")
    proc = subprocess.run([str(cli), "validate", "--format", "json", *files], cwd=root, capture_output=True, text=True)
    report = json.loads(proc.stdout) if proc.stdout.strip().startswith("[") else [{"error": proc.stderr[-2000:]}]
    aggregates, instances, sidecars = {}, {}, {}
    for rel in files:
        path = Path(root) / rel
        if rel.endswith(".jsonl"):
            rows = [InstanceLevelEvaluationLog.model_validate_json(line) for line in path.read_text().splitlines() if line]
            instances[rel] = [{"sample_id": r.sample_id, "score": r.evaluation.score, "is_correct": r.evaluation.is_correct}
                              for r in rows]
            continue
        log = EvaluationLog.model_validate_json(path.read_text())
        results = {}
        for result in log.evaluation_results:
            ci = result.score_details.uncertainty.confidence_interval if result.score_details.uncertainty else None
            scoring = result.metric_config.llm_scoring
            results[result.evaluation_result_id] = {
                "score": result.score_details.score, "lower": ci.lower if ci else None, "upper": ci.upper if ci else None,
                "lower_is_better": result.metric_config.lower_is_better,
                "judges": [j.model_info.id for j in scoring.judges] if scoring else [],
                "judge_prompt_chars": len(scoring.input_prompt) if scoring else 0}
        detail = log.detailed_evaluation_results
        sidecar = Path(root) / detail.file_path
        body = sidecar.read_bytes() if sidecar.exists() else b""
        sidecars[rel] = {"file": detail.file_path, "exists": sidecar.exists(),
                         "checksum_ok": hashlib.sha256(body).hexdigest() == detail.checksum,
                         "rows_ok": len([x for x in body.splitlines() if x.strip()]) == detail.total_rows}
        aggregates[rel] = {"evaluation_id": log.evaluation_id, "relationship": log.source_metadata.evaluator_relationship.value,
                           "model_id": log.model_info.id, "results": results}
    return {"report": report, "aggregates": aggregates, "instances": instances, "sidecars": sidecars}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2:])))
