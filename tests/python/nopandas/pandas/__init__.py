"""`import pandas` fails as where pandas is not installed: first on the path of
py_test_tracker_nopandas (RT_PY_BLOCK), whatever the machine has."""

raise ImportError("No module named 'pandas' (blocked for this test run: tests/python/nopandas)")
