"""The commands of `python -m analysis`: each declared by the module of `analysis.cli` named
for it, with the shared arguments spelled alike (`analysis.cli.common.add_command`)."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import analysis.cli
from analysis.__main__ import build_parser
from analysis.cli import COMMANDS, module_of


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_each_command_module_declares_its_own_command():
    for command in COMMANDS:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module_of(command)).register(sub)
        assert list(sub.choices) == [command]


def test_the_commands_are_the_modules_of_the_package():
    assert list(_subcommands(build_parser())) == list(COMMANDS)
    folder = Path(analysis.cli.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__", "common"}
    assert modules == {c.replace("-", "_") for c in COMMANDS}


def test_shared_arguments_are_spelled_alike():
    parsers = []
    for command, parser in _subcommands(build_parser()).items():
        steps = _subcommands(parser)
        parsers += [(f"{command} {s}", p) for s, p in steps.items()] or [(command, parser)]
    seen = {"--export": 0, "--out": 0, "--no-progress": 0}
    for name, parser in parsers:
        options = {o: a for a in parser._actions for o in a.option_strings}
        if "--export" in options:
            seen["--export"] += 1
            assert options["--export"].required and options["--export"].type is Path, name
        if "--out" in options:
            seen["--out"] += 1
            out = options["--out"]
            assert out.metavar == "DIR" and out.type is Path, name
            assert out.help.startswith("output folder, created if missing"), name
        if "--no-progress" in options:
            seen["--no-progress"] += 1
            assert options["--no-progress"].dest == "no_progress", name
    assert seen["--export"] >= 5 and seen["--out"] == len(parsers) and seen["--no-progress"] >= 4
