"""Parquet files as `pipeline export` writes them: zstd, row groups of a bounded size written as
they fill (memory stays one row group, whatever the file), under a temporary name renamed when
the file is whole.

pyarrow comes with the `export` extra (`pip install 'wiki2bert[export]'`); without it the stage
stops with one line saying so (require_pyarrow).

Usage:
    pa, pq = require_pyarrow()
    with ParquetParts(path, schema, group_bytes=16 << 20) as out:
        out.add({"id": "1", "text": "..."}, nbytes=len(text))    # a row; a full group is written
        out.write_table(table)                                   # or a whole row group at once
"""
from __future__ import annotations

import contextlib
from pathlib import Path

from common.atomic import atomic_path

from .errors import StageError

EXTRA = "export"
COMPRESSION = "zstd"
COMPRESSION_LEVEL = 3


def require_pyarrow():
    """(pyarrow, pyarrow.parquet), or one StageError line naming the extra to install."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise StageError(f"export needs pyarrow, which is not installed ({exc.name or exc}): "
                         f"pip install 'wiki2bert[{EXTRA}]' (or `make setup`)") from None
    return pa, pq


class ParquetParts:
    """One Parquet file written a row group at a time (see the module doc); rows are dicts of
    the schema's columns; `rows` and `groups` count what was written. The file exists only
    once it is closed whole (common/atomic.py's temporary name, then rename)."""

    def __init__(self, path: Path, schema, group_bytes: int = 16 << 20, group_rows: int = 1 << 20):
        self.path, self.schema = Path(path), schema
        self.group_bytes, self.group_rows = group_bytes, group_rows
        self.columns: dict[str, list] = {name: [] for name in schema.names}
        self.buffered = self.rows = self.groups = 0
        self._writer = None
        self._atomic = None

    def __enter__(self) -> ParquetParts:
        return self

    def add(self, row: dict, nbytes: int) -> None:
        for name, values in self.columns.items():
            values.append(row.get(name))
        self.buffered += nbytes
        if self.buffered >= self.group_bytes or len(self.columns[self.schema.names[0]]) >= self.group_rows:
            self.flush()

    def flush(self) -> None:
        if not self.columns[self.schema.names[0]]:
            return
        pa, _ = require_pyarrow()
        self.write_table(pa.table({k: pa.array(v, type=self.schema.field(k).type)
                                   for k, v in self.columns.items()}, schema=self.schema))
        self.columns = {name: [] for name in self.schema.names}
        self.buffered = 0

    def write_table(self, table) -> None:
        """`table` (of the schema) as one row group."""
        if not table.num_rows:
            return
        with self._named():
            if self._writer is None:
                _, pq = require_pyarrow()
                self._atomic = atomic_path(self.path)
                tmp = self._atomic.__enter__()
                self._writer = pq.ParquetWriter(str(tmp), self.schema, compression=COMPRESSION,
                                                compression_level=COMPRESSION_LEVEL)
            self._writer.write_table(table, row_group_size=table.num_rows)
        self.rows += table.num_rows
        self.groups += 1

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.flush()
            if self._writer is not None:
                with self._named():
                    self._writer.close()
        except BaseException as error:
            if self._atomic is not None:   # the temporary goes
                self._atomic.__exit__(type(error), error, error.__traceback__)
            raise
        if self._atomic is not None:
            self._atomic.__exit__(exc_type, exc, tb)

    @contextlib.contextmanager
    def _named(self):
        """pyarrow's failed write names no file (pipeline/core/os_errors.py needs one): ours."""
        try:
            yield
        except OSError as exc:
            if exc.filename is None:
                exc.filename = str(self.path)
            raise
