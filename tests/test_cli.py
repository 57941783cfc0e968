"""The ``dlhack`` command (dlhack.cli): the usage names every sub-command, each sub-command is a
module with a ``main``, and an unknown one is refused with the usage."""
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from dlhack import cli


def test_usage_names_every_command(capsys):
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert all(f"  {name} " in out for name in cli.COMMANDS)


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_every_command_is_a_module_with_a_main(name):
    module = importlib.import_module(cli.COMMANDS[name][0])
    assert callable(module.main), name


def test_an_unknown_command_exits_2_with_the_usage(capsys):
    assert cli.main(["trian"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'trian'" in err and "commands:" in err


def test_the_installed_command_runs():
    done = subprocess.run([str(Path(sys.executable).with_name("dlhack")), "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "usage: dlhack COMMAND" in done.stdout
