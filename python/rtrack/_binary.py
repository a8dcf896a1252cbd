"""Which rtrack binary the package runs: the wheel's, else RTRACK_BIN, else rtrack on PATH."""

import csv
import glob
import os
import shutil
import subprocess

from ._version import __version__


class RtrackError(RuntimeError):
    """rtrack could not do what was asked; the message says why (rtrack's own words where
    rtrack said something)."""


def _version_tuple(text):
    parts = []
    for p in text.split("."):
        digits = "".join(c for c in p if c.isdigit()) if p else ""
        if not digits:
            break
        parts.append(int(digits))
        if not p.isdigit():
            break
    return tuple(parts)


def wheel_binary():
    """The rtrack that this package's wheel installed (its RECORD names it: pip puts it in the
    scheme's scripts directory, e.g. a venv's bin/), or None (a source checkout, no wheel)."""
    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for record in sorted(glob.glob(os.path.join(site, "rtrack-*.dist-info", "RECORD"))):
        try:
            with open(record, newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
        except OSError:
            continue
        for row in rows:
            if not row or row[0].startswith("rtrack/") or os.path.basename(row[0]) != "rtrack":
                continue
            path = os.path.normpath(os.path.join(site, row[0]))
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


_checked = {}


def binary_version(path):
    """rtrack's version as `rtrack --version`'s first line gives it ('0.1.0')."""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _checked:
        try:
            out = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL,
                                 capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError) as e:
            raise RtrackError(f"cannot run {path} --version: {e}") from e
        first = out.stdout.decode("utf-8", "replace").split("\n", 1)[0].split()
        if out.returncode != 0 or len(first) != 2 or first[0] != "rtrack":
            msg = out.stderr.decode("utf-8", "replace").strip() or first
            raise RtrackError(f"{path} is not an rtrack binary (--version said {msg!r})")
        _checked[key] = first[1]
    return _checked[key]


def find_binary():
    """The rtrack to run: the wheel's, else $RTRACK_BIN, else `rtrack` on PATH. Raises
    RtrackError naming the three places when there is none, or when the one found is older than
    this package."""
    where = "this package's wheel"
    path = wheel_binary()
    if path is None:
        env = os.environ.get("RTRACK_BIN")
        if env:
            where = "RTRACK_BIN"
            if not (os.path.isfile(env) and os.access(env, os.X_OK)):
                raise RtrackError(f"RTRACK_BIN={env} is not an executable file: point it at the "
                                  "rtrack binary, or unset it to use rtrack on PATH")
            path = os.path.abspath(env)
        else:
            where = "PATH"
            path = shutil.which("rtrack")
    if path is None:
        raise RtrackError(
            "no rtrack binary found: this package was not installed from an rtrack wheel (which "
            "carries one), RTRACK_BIN is not set, and there is no rtrack on PATH; install the "
            "wheel (pip install rtrack-VERSION-...whl), set RTRACK_BIN=/path/to/rtrack, or put "
            "rtrack on PATH")
    version = binary_version(path)
    if _version_tuple(version) < _version_tuple(__version__):
        raise RtrackError(
            f"rtrack {version} at {path} (from {where}) is older than this package "
            f"({__version__}): install rtrack {__version__} or newer, or the wheel of this "
            "version, which carries its own binary")
    return path
