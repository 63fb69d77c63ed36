"""The package version (one place: the front door :mod:`mjenv` and the file formats that stamp it read it here)."""

__version__ = "0.1.0"
