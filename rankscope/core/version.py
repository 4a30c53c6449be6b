"""The package version, in the bottom layer so that saved indexes and reports can record it."""

__version__ = "0.1.0"
