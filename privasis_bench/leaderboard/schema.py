"""The JSON Schemas of submitted files: the run record's own (kept beside its writer, :mod:`privasis_bench.results.schema`)."""

from privasis_bench.results.schema import BUILTIN, load_schema, schema_errors

__all__ = ["BUILTIN", "load_schema", "schema_errors"]
