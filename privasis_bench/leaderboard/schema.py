"""The JSON Schemas of submitted files: the run record's own (kept beside its writer, :mod:`privasis_bench.results.schema`)."""

from privasis_bench.results.schema import load_schema, schema_errors

__all__ = ["load_schema", "schema_errors"]
