"""The tables the tracker reads back: the Python resource-tracker's CSV columns, as rtrack
export writes them, in a small dict-of-lists table (or a pandas DataFrame)."""

import csv
import io

# The Python resource-tracker's human-readable column names (its column_maps.HUMAN_NAMES_MAPPING)
HUMAN_NAMES = {
    "timestamp": "Timestamp",
    "processes": "processes",
    "utime": "CPU time (user)",
    "stime": "CPU time (system)",
    "cpu_usage": "CPU usage",
    "memory_free_mib": "free memory",
    "memory_used_mib": "used memory",
    "memory_buffers_mib": "memory buffers",
    "memory_cached_mib": "memory page/file cached",
    "memory_active_mib": "active memory",
    "memory_inactive_mib": "inactive memory",
    "disk_read_bytes": "disk read",
    "disk_write_bytes": "disk write",
    "disk_space_total_gb": "disk space total",
    "disk_space_used_gb": "disk space used",
    "disk_space_free_gb": "disk space free",
    "net_recv_bytes": "inbound network traffic",
    "net_sent_bytes": "outbound network traffic",
    "gpu_usage": "GPU usage",
    "gpu_vram_mib": "VRAM used",
    "gpu_utilized": "GPUs in use",
    "pid": "PID",
    "children": "children",
    "memory_mib": "memory usage",
}


def byte_factor(column):
    """bytes=True: what a column is multiplied by (MiB -> bytes, GB = 10^9 -> bytes), else 1."""
    if column.endswith("_mib"):
        return 1024 * 1024
    if column.startswith("disk_space_") and column.endswith("_gb"):
        return 1000 ** 3
    return 1


def _value(text):
    """A CSV field as the Python resource-tracker reads it back: int, else float, else the
    text (a missing value stays "")."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _pandas():
    try:
        import pandas  # noqa: PLC0415 (optional: only when a DataFrame is asked for)
    except ImportError as e:
        raise ImportError("a pandas DataFrame was asked for, but pandas cannot be imported "
                          f"({e}); install pandas, or leave pandas=False for a Table") from e
    return pandas


class Table:
    """Columns of equal length: table["cpu_usage"] is a list, len(table) the number of rows
    (as in pandas), iteration and keys() give the column names, so dict(table) is the plain
    dict of lists. to_csv() writes the Python resource-tracker's CSV dialect."""

    def __init__(self, columns, data=None):
        self.columns = list(columns)
        data = data or {}
        self._data = {c: list(data.get(c, [])) for c in self.columns}

    @classmethod
    def from_csv(cls, text):
        rows = list(csv.reader(io.StringIO(text)))
        if not rows:
            return cls([])
        head, body = rows[0], rows[1:]
        return cls(head, {c: [_value(r[i]) for r in body] for i, c in enumerate(head)})

    def __len__(self):
        return len(self._data[self.columns[0]]) if self.columns else 0

    def __getitem__(self, key):
        if isinstance(key, slice):
            return Table(self.columns, {c: v[key] for c, v in self._data.items()})
        return self._data[key]

    def __setitem__(self, key, values):
        if key not in self._data:
            self.columns.append(key)
        self._data[key] = list(values)

    def __contains__(self, key):
        return key in self._data

    def __iter__(self):
        return iter(self.columns)

    def keys(self):
        return list(self.columns)

    def items(self):
        return [(c, self._data[c]) for c in self.columns]

    def to_dict(self):
        """A plain dict of lists (copies)."""
        return {c: list(self._data[c]) for c in self.columns}

    def rows(self):
        """The rows as dicts, in order."""
        return [dict(zip(self.columns, r)) for r in zip(*(self._data[c] for c in self.columns))]

    def rename(self, names):
        """A copy with the columns renamed by the dict `names` (others kept)."""
        return Table([names.get(c, c) for c in self.columns],
                     {names.get(c, c): v for c, v in self._data.items()})

    def to_csv(self, path=None):
        """The table as the Python resource-tracker writes CSV (every name quoted, numbers bare,
        "" for a missing value, \\n line ends): a table read from rtrack export gives its bytes
        back. Written to path when given; the text is returned either way."""
        out = io.StringIO()
        w = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        w.writerow(self.columns)
        w.writerows(zip(*(self._data[c] for c in self.columns)))
        text = out.getvalue()
        if path is not None:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        return text

    def to_pandas(self):
        """A pandas DataFrame of the same columns (pandas parses the same CSV)."""
        return _pandas().read_csv(io.StringIO(self.to_csv()))

    def __repr__(self):
        return f"<rtrack.Table: {len(self)} rows x {len(self.columns)} columns>"
