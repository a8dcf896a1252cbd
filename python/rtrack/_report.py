"""The HTML report of a run (rtrack report), as the Python resource-tracker's report() returns
it: a str with save() and browse(), shown inline by a notebook."""

import html
import os
import tempfile
import webbrowser


class Report(str):
    """rtrack's HTML report of one run, a whole HTML page."""

    def save(self, path):
        """Write the page to path (created with mode 0600, as rtrack's own outputs); returns
        path."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self)
        return path

    def browse(self):
        """Open the page in the default web browser (from a temporary file); returns its path."""
        fd, path = tempfile.mkstemp(prefix="rtrack-report-", suffix=".html")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self)
        webbrowser.open("file://" + path)
        return path

    def _repr_html_(self):
        # a page of its own in the notebook (its styles stay inside the frame)
        return (f'<iframe srcdoc="{html.escape(self, quote=True)}" '
                'style="width: 100%; height: 800px; border: 0"></iframe>')
