"""The one error of the Prolific connection: its message names the problem for the console
and the command line, and never contains the token."""

from __future__ import annotations


class PanelError(Exception):
    """Bad input, a refused request or an unreachable Prolific, said in one sentence."""
