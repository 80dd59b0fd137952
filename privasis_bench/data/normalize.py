"""Turn one raw benchmark row into a typed :class:`Record` (protocol §1).

Every rule here is table-tested in ``tests/test_normalize.py``. Errors name the record id and field.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from privasis_bench.data.records import EXCLUDED_NO_KEEP, Attribute, Record
from privasis_bench.errors import DataError

REQUIRED_TEXT_COLUMNS = ("original_record", "base_instruction", "smoothed_instruction")
REQUIRED_ATTRIBUTE_COLUMNS = ("attributes_to_drop", "attributes_to_abstract", "attributes_to_keep")
OPTIONAL_TEXT_COLUMNS = ("record_type", "sanitized_record")
KNOWN_COLUMNS = frozenset(
    {"id", *REQUIRED_TEXT_COLUMNS, *REQUIRED_ATTRIBUTE_COLUMNS, *OPTIONAL_TEXT_COLUMNS, "grouped_annotated_attributes"}
)
CATEGORY_COLUMNS = ("category", "tag")


class RowError(DataError):
    """One malformed row: carries the record id (or row number) and the field."""

    def __init__(self, record_id: str, field: str, message: str):
        self.record_id, self.field = record_id, field
        super().__init__(f"record {record_id!r}: field {field!r}: {message}")


def decode_json_field(row: Mapping[str, Any], column: str, record_id: str) -> Any:
    """A column that may hold a JSON string or an already-decoded object (None stays None)."""
    value = row.get(column)
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise RowError(record_id, column, f"invalid JSON ({exc.msg} at char {exc.pos})") from None
    if value is None or isinstance(value, (dict, list)):
        return value
    raise RowError(record_id, column, f"expected a JSON string or an object, got {type(value).__name__}")


def selected_attributes(spec: Any, column: str, record_id: str) -> list[tuple[str, Any, str | None]]:
    """(name, value, group) triples from ``{"selected": S, "group": bool}``.

    S may be a list of ``{"attrs": {...}, "group_name": str}`` groups, a flat ``{name: value}`` dict,
    or null/empty (nothing selected).
    """
    if spec is None:
        return []
    if not isinstance(spec, dict):
        raise RowError(record_id, column, f"expected an object with a 'selected' key, got {type(spec).__name__}")
    selected = spec.get("selected")
    if not selected:
        return []
    if isinstance(selected, dict):
        return [(str(name), value, None) for name, value in selected.items()]
    if not isinstance(selected, list):
        raise RowError(record_id, f"{column}.selected", f"expected a list of groups or a mapping, got {type(selected).__name__}")
    triples: list[tuple[str, Any, str | None]] = []
    for i, group in enumerate(selected):
        if not isinstance(group, dict) or not isinstance(group.get("attrs"), dict):
            raise RowError(record_id, f"{column}.selected[{i}]", "each group needs an 'attrs' mapping")
        group_name = group.get("group_name")
        triples.extend((str(name), value, group_name) for name, value in group["attrs"].items())
    return triples


def keep_attributes(spec: Any, record_id: str) -> list[Attribute]:
    """Keep attributes from the flat ``{name: {"value": v, "sanitization": "keep", ...}}`` map."""
    if not spec:
        return []
    if not isinstance(spec, dict):
        raise RowError(record_id, "attributes_to_keep", f"expected a mapping, got {type(spec).__name__}")
    out: list[Attribute] = []
    for name, entry in spec.items():
        if not isinstance(entry, dict) or "value" not in entry:
            raise RowError(record_id, f"attributes_to_keep.{name}", "each entry must be an object with a 'value' key")
        out.append(Attribute(name=str(name), value=entry["value"], kind="keep", group=entry.get("group_name")))
    return out


def is_empty_value(value: Any) -> bool:
    """True for a value that holds no text to look for ("", whitespace, [] or {} of such): null is not empty.

    Such a value is vacuous under the matching rules (an empty keep value counts as retained for any output, an empty
    target never leaks), so a row carrying one is invalid.
    """
    if value is None:
        return False
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple)):
        return all(item is None or is_empty_value(item) for item in value)
    if isinstance(value, dict):
        return all(item is None or is_empty_value(item) for item in value.values())
    return False


def _check_values(attributes: Any, column: str, record_id: str) -> None:
    for attr in attributes:
        if is_empty_value(attr.value):
            raise RowError(record_id, f"{column}.{attr.name}", f"empty value {attr.value!r} (use null for an attribute "
                           "with no value; an empty one would count as kept, or never leak, whatever the output)")


def _encodable(text: str) -> bool:
    """False for text with a lone surrogate (JSON allows "\\ud800"; UTF-8 cannot write it)."""
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _text(row: Mapping[str, Any], column: str, record_id: str, *, required: bool) -> str:
    if column not in row:
        if required:
            raise RowError(record_id, column, "column is missing")
        return ""
    value = row[column]
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise RowError(record_id, column, f"expected a string, got {type(value).__name__}")
    return value


def _category(row: Mapping[str, Any], columns: tuple[str, ...], record_id: str) -> str | None:
    """The breakdown category: the first non-empty of ``columns``, a string or a whole number (else a RowError)."""
    for column in columns:
        value = row.get(column)
        if value is None or value == "":
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise RowError(record_id, column, f"expected a string (or a whole number), got {type(value).__name__}")
        if isinstance(value, str) and not _encodable(value):
            raise RowError(record_id, column, "holds a lone surrogate (not valid Unicode text)")
        return str(value)
    return None


def normalize_row(row: Mapping[str, Any], *, row_number: int, category_column: str | None = None) -> Record:
    """Build a :class:`Record` from a raw row; raise :class:`RowError` if it is malformed."""
    raw_id = row.get("id")
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        raise RowError(f"row {row_number}", "id", "column is missing or empty")
    if not isinstance(raw_id, (str, int)):
        raise RowError(f"row {row_number}", "id", f"expected a string, got {type(raw_id).__name__}")
    record_id = str(raw_id)
    if not _encodable(record_id):
        raise RowError(f"row {row_number}", "id", f"{record_id!r} holds a lone surrogate (not valid Unicode text)")

    texts = {c: _text(row, c, record_id, required=True) for c in REQUIRED_TEXT_COLUMNS}
    for column, value in texts.items():
        if not _encodable(value):
            raise RowError(record_id, column, "holds a lone surrogate (not valid Unicode text)")
    if not texts["original_record"].strip():
        raise RowError(record_id, "original_record", "is empty (there is no text to sanitize)")
    optional = {c: _text(row, c, record_id, required=False) for c in OPTIONAL_TEXT_COLUMNS}
    for column in REQUIRED_ATTRIBUTE_COLUMNS:
        if column not in row:
            raise RowError(record_id, column, "column is missing")

    targets: dict[str, Attribute] = {}
    for column, kind in (("attributes_to_drop", "drop"), ("attributes_to_abstract", "abstract")):
        spec = decode_json_field(row, column, record_id)
        for name, value, group in selected_attributes(spec, column, record_id):
            targets[name] = Attribute(name=name, value=value, kind=kind, group=group)  # later entry wins

    keep = keep_attributes(decode_json_field(row, "attributes_to_keep", record_id), record_id)
    _check_values([t for t in targets.values() if t.kind == "drop"], "attributes_to_drop", record_id)
    _check_values([t for t in targets.values() if t.kind == "abstract"], "attributes_to_abstract", record_id)
    _check_values(keep, "attributes_to_keep", record_id)
    groups = decode_json_field(row, "grouped_annotated_attributes", record_id) or {}
    if not isinstance(groups, dict):
        raise RowError(record_id, "grouped_annotated_attributes", f"expected a mapping, got {type(groups).__name__}")

    category = _category(row, (category_column,) if category_column else CATEGORY_COLUMNS, record_id)
    extra = {k: v for k, v in row.items() if k not in KNOWN_COLUMNS}

    return Record(
        id=record_id,
        record_type=optional["record_type"],
        text=texts["original_record"],
        base_instruction=texts["base_instruction"],
        smoothed_instruction=texts["smoothed_instruction"],
        reference_sanitized=optional["sanitized_record"],
        targets=tuple(targets.values()),
        keep=tuple(keep),
        groups=groups,
        category=category,
        extra=extra,
        excluded_reason=None if keep else EXCLUDED_NO_KEEP,
    )
