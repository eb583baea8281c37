"""The one error of the coding's writes."""

from __future__ import annotations


class CodingRefused(ValueError):
    """A write the coding does not allow; the message says why."""
