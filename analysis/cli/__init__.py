"""The commands of `recourse-analysis` (`python -m analysis`), one module each, named for its
command (`to-r` in `to_r`): `COMMANDS` is their order in the help, and `python -m analysis`
registers each module's command from it (`register`). What they share is in `common`."""

COMMANDS = (
    "gamm",
    "study",
    "methods",
    "registered",
    "segregation",
    "effects",
    "waves",
    "experiment",
    "power",
    "reproduce",
    "to-r",
    "coding",
    "report",
)


def module_of(command: str) -> str:
    """The module that declares `command`."""
    return f"analysis.cli.{command.replace('-', '_')}"
