"""`sizing` interrupted while its modules load: one line and exit 130, no traceback."""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder

import pipelines
from pipelines import entry


class _CtrlCWhileImporting(MetaPathFinder):
    """An import of the CLI module that Ctrl-C interrupts, as a keypress during start-up."""

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001 - importlib's API
        if name == "pipelines.cli":
            raise KeyboardInterrupt
        return None


def test_a_ctrl_c_while_the_cli_loads_is_one_line_and_exit_130(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "pipelines.cli", raising=False)
    monkeypatch.delattr(pipelines, "cli", raising=False)  # else `from pipelines import cli`
    monkeypatch.setattr(sys, "meta_path", [_CtrlCWhileImporting(), *sys.meta_path])
    assert entry.main() == 130
    assert capsys.readouterr() == ("", "sizing: interrupted while starting\n")


def test_the_entry_runs_the_command(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["sizing", "query", " "])
    assert entry.main() == 2
    assert capsys.readouterr().err == "sizing query: an empty SQL statement\n"
