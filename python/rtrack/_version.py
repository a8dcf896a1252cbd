"""The package's version: rtrack's own (CMakeLists.txt's project VERSION; tests/python checks)."""

__version__ = "0.1.0"
