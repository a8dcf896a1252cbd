"""rtrack from inside Python: record this interpreter (and what it starts) with rtrack, and read
the run back in the Python resource-tracker's shapes. Standard library only; the rtrack binary
is the wheel's, else $RTRACK_BIN, else rtrack on PATH. See docs/python.md.

    import rtrack
    with rtrack.track() as t:
        work()
    t.stats(); t.recommend_resources(); t.report().save("report.html")
"""

from ._binary import RtrackError, find_binary
from ._report import Report
from ._table import Table
from ._tracker import ResourceTracker, Tracker, track
from ._version import __version__

__all__ = ["Tracker", "ResourceTracker", "track", "Table", "Report", "RtrackError",
           "find_binary", "__version__"]
