"""Load a task's rows (Hugging Face hub or local jsonl/json/parquet) and normalize them into records.

Local JSON/JSONL files are read as-is (their columns may mix JSON strings and objects, which Arrow
cannot hold in one column); parquet files and the hub go through ``datasets``.
"""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlparse

from privasis_bench.data.normalize import RowError, normalize_row
from privasis_bench.data.records import Record
from privasis_bench.errors import DataError
from privasis_bench.fsutil import iter_text_lines, loads_json, read_text
from privasis_bench.tasks.config import DatasetConfig, TaskConfig

HUB_PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class InvalidRow:
    """A row that could not be normalized (kept for reporting with ``--skip-invalid``)."""

    row_number: int
    record_id: str
    field: str
    message: str


class LoadedRecords:
    """The records of one task plus what was excluded or skipped on the way.

    Loaded eagerly (``records`` given) or streamed (``reader`` given): a streamed task keeps only its ids, its
    excluded records and its invalid rows in memory, and reads the records again from their source each time
    :meth:`iter_records` is called, so a run over a large task holds a window of records, not all of them.
    ``records`` and ``scored`` still work on a streamed task, but read every record into memory.
    """

    def __init__(self, records: list[Record] | None, source: str, invalid: list[InvalidRow] | None = None, *,
                 reader: Callable[[], Iterator[Record]] | None = None, ids: list[str] | None = None,
                 excluded: list[Record] | None = None) -> None:
        if records is None and (reader is None or ids is None or excluded is None):
            raise ValueError("a streamed LoadedRecords needs reader, ids and excluded")
        self._records, self._reader = records, reader
        self.source, self.invalid = source, list(invalid or [])
        self.ids = ids if ids is not None else [r.id for r in records or []]
        self._excluded = excluded if excluded is not None else [r for r in records or [] if r.excluded]

    def iter_records(self) -> Iterator[Record]:
        """Every record, in order (read again from the source when streamed)."""
        if self._records is not None:
            return iter(self._records)
        assert self._reader is not None
        return self._reader()

    @property
    def records(self) -> list[Record]:
        """Every record, in order, in memory."""
        if self._records is None:
            self._records = list(self.iter_records())
        return self._records

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def scored(self) -> list[Record]:
        """Records that enter the metrics (those with at least one keep attribute)."""
        return [r for r in self.records if not r.excluded]

    @property
    def scored_count(self) -> int:
        """How many records enter the metrics (without reading them)."""
        return len(self.ids) - len(self._excluded)

    @property
    def excluded(self) -> list[Record]:
        return list(self._excluded)

    def require(self, task_name: str, *, scored: bool = True) -> "LoadedRecords":
        """Raise a one-line DataError when there is nothing to work on (no records, or none that is scored)."""
        if not self.ids:
            skipped = f" ({len(self.invalid)} invalid row(s) skipped)" if self.invalid else ""
            raise DataError(f"task {task_name}: {self.source} holds no records{skipped}; nothing to evaluate")
        if scored and not self.scored_count:
            raise DataError(
                f"task {task_name}: none of its {len(self.ids)} record(s) is scored by the protocol (every one has "
                "no keep attribute, so it is excluded); nothing to evaluate"
            )
        return self

    @property
    def ids_hash(self) -> str:
        """sha256 over the ordered record ids (identifies exactly which records were evaluated)."""
        return hashlib.sha256("\n".join(self.ids).encode()).hexdigest()


def _file_format(path: str, declared: str | None) -> str:
    if declared:
        return "json" if declared == "jsonl" else declared
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "json"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise DataError(f"{path}: cannot tell the file format from its extension; set dataset.format (json|jsonl|parquet)")


def _iter_json_rows(path: str) -> Iterator[dict[str, Any]]:
    lines = iter_text_lines(path, "data file")
    for line_no, line in lines:
        if not line.strip():
            continue
        if line.lstrip().startswith("["):  # a JSON array, not JSON lines: read the whole file
            lines.close()
            yield from _iter_json_array(path)
            return
        row = loads_json(line, f"{path}:{line_no}", unicode_check=False)  # lone surrogates: named per row later
        if not isinstance(row, dict):
            raise DataError(f"{path}:{line_no}: a row must be a JSON object")
        yield row


def _iter_json_array(path: str) -> Iterator[dict[str, Any]]:
    text = read_text(path, "data file")
    rows = loads_json(text, path, unicode_check=False)
    if not isinstance(rows, list):
        raise DataError(f"{path}: expected a JSON array of row objects, got {type(rows).__name__}")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise DataError(f"{path}: item {i} is not an object")
        yield row


def _iter_parquet_rows(paths: list[str]) -> Iterator[dict[str, Any]]:
    import datasets

    try:
        import pyarrow.parquet as pq

        empty = []
        for path in paths:  # check each file first, so a corrupt one is named (datasets' error names none)
            if pq.ParquetFile(path).metadata.num_rows == 0:
                empty.append(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a broken file
        raise DataError(f"{path}: not a readable parquet file ({' '.join(str(exc).split())[:160]})") from None
    if empty:
        raise DataError(f"{empty[0]}: the parquet file holds no rows (point --data-files at a file with records)")
    ds = datasets.load_dataset("parquet", data_files=paths, split="train")
    yield from ds


def _hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co")


def hub_reachable(timeout: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """A quick TCP probe of the hub endpoint (so an offline machine fails in seconds, not minutes)."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return False
    url = urlparse(_hub_endpoint())
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def _hub_help(cfg: DatasetConfig, reason: str) -> str:
    return (  # the cache is named by its variable, not its value (no environment value is ever printed)
        f"cannot load {cfg.describe()} from the Hugging Face hub: {reason}. "
        "Either pre-download it on a connected machine into the Hugging Face cache (the folder $HF_HOME names, "
        "by default ~/.cache/huggingface) "
        f"(`huggingface-cli download {cfg.path} --repo-type dataset`) and copy that cache here, "
        f"or use local files: `--data-files {cfg.name or 'config'}_{cfg.split}.parquet`, or a task YAML with "
        f"`include:` of the built-in task and `dataset: {{data_files: [PATH.parquet]}}`."
    )


def _iter_hub_rows(cfg: DatasetConfig) -> Iterator[dict[str, Any]]:
    import datasets
    from huggingface_hub import constants as hub_constants

    online = hub_reachable()
    saved = (hub_constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE)
    if not online:  # only the local cache can help: never wait on the network
        hub_constants.HF_HUB_OFFLINE = True
        datasets.config.HF_HUB_OFFLINE = True
    try:
        ds = datasets.load_dataset(cfg.path, name=cfg.name, split=cfg.split, revision=cfg.revision)
    except Exception as exc:  # datasets raises many types (ConnectionError, FileNotFoundError, ValueError...)
        reason = "the hub is unreachable and the dataset is not in the local cache" if not online else (
            str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        )
        raise DataError(_hub_help(cfg, reason)) from None
    finally:
        hub_constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = saved
    yield from ds


def iter_rows(cfg: DatasetConfig) -> Iterator[dict[str, Any]]:
    """Raw rows of a dataset config, in order."""
    if cfg.data_files:
        formats = {_file_format(p, cfg.format) for p in cfg.data_files}
        if formats == {"json"}:
            for path in cfg.data_files:
                yield from _iter_json_rows(path)
            return
        if formats == {"parquet"}:
            yield from _iter_parquet_rows(cfg.data_files)
            return
        raise DataError(f"dataset.data_files mixes formats {sorted(formats)}; use one format per task")
    if not cfg.path:
        raise DataError("the task's dataset has neither data_files nor a hub path")
    yield from _iter_hub_rows(cfg)


def with_data_files(task: TaskConfig, data_files: list[str]) -> TaskConfig:
    """A copy of the task reading local files instead of its configured source."""
    return task.with_data_files(data_files)


def load_records(task: TaskConfig, *, skip_invalid: bool = False, limit: int | None = None,
                 stream: bool = False) -> LoadedRecords:
    """Load and normalize a task's rows. Malformed rows raise unless ``skip_invalid``; then they are counted.

    With ``stream``, every row is read and checked once now, but only ids and exclusions are kept; the records
    are read again each time they are iterated (see :class:`LoadedRecords`).
    """
    cfg = task.dataset
    invalid: list[InvalidRow] = []
    if not stream:
        records = list(_normalized(cfg, skip_invalid=skip_invalid, limit=limit, invalid=invalid))
        return LoadedRecords(records=records, source=cfg.describe(), invalid=invalid)
    ids: list[str] = []
    excluded: list[Record] = []
    before = _files_fingerprint(cfg)
    for record in _normalized(cfg, skip_invalid=skip_invalid, limit=limit, invalid=invalid):
        ids.append(record.id)
        if record.excluded:
            excluded.append(record)

    def reader() -> Iterator[Record]:
        # The records are read again: stop if a local data file changed since it was checked (the run would mix
        # two versions of the data under one set of ids).
        for path, digest in before.items():
            if _sha256(path) != digest:
                raise DataError(f"{path}: the data file changed after it was checked (sha256 differs); re-run on "
                                "a file that is not being written")
        return _normalized(cfg, skip_invalid=True, limit=limit, invalid=[])

    return LoadedRecords(None, cfg.describe(), invalid, reader=reader, ids=ids, excluded=excluded)


def _sha256(path: str) -> str | None:
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return None


def _files_fingerprint(cfg: DatasetConfig) -> dict[str, str | None]:
    """sha256 of each local data file (hub datasets are pinned by their revision instead)."""
    return {path: _sha256(path) for path in cfg.data_files or []}


def _normalized(cfg: DatasetConfig, *, skip_invalid: bool, limit: int | None, invalid: list[InvalidRow]) -> Iterator[Record]:
    """The valid records of a dataset, in order; invalid rows raise or are added to ``invalid``."""
    seen: set[str] = set()
    for row_number, row in enumerate(iter_rows(cfg), start=1):
        if limit is not None and row_number > limit:
            break
        try:
            record = normalize_row(row, row_number=row_number, category_column=cfg.category_column)
            if record.id in seen:
                raise RowError(record.id, "id", "duplicate id")
        except RowError as exc:
            if not skip_invalid:
                raise DataError(f"{cfg.describe()}: {exc} (use --skip-invalid to skip such rows)") from None
            invalid.append(InvalidRow(row_number, exc.record_id, exc.field, str(exc)))
            continue
        seen.add(record.id)
        yield record
