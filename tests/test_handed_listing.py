"""`sizing ingest` lists the raw root once: the listing it made to decide whether to run at
all is handed to its run as the `handed_listing` resource (not through a module global),
and the run's observation of the raw root uses it."""

from __future__ import annotations

import shutil
from pathlib import Path

from assets import resources
from assets.resources import HandedListing
from ingest import discovery, unchanged
from pipelines.cli import main
from tests.conftest import PROJECT

FIXTURES = PROJECT / "tests" / "fixtures" / "reference"


def test_a_listing_is_taken_once_and_only_for_its_root(tmp_path):
    (tmp_path / "a.csv").write_text("x\n")
    found = discovery.discover(tmp_path)
    handed = HandedListing(tmp_path / ".", found)
    assert handed.take(tmp_path / "elsewhere") is None
    assert [f.relpath for f in handed.take(tmp_path) or []] == ["a.csv"]
    assert handed.take(tmp_path) is None  # once
    assert HandedListing().take(tmp_path) is None


def test_a_run_lists_the_raw_root_once(tmp_path, monkeypatch, capsys):
    raw, warehouse = tmp_path / "raw", tmp_path / "lab.duckdb"
    (raw / "reference").mkdir(parents=True)
    shutil.copy(FIXTURES / "gpus.csv", raw / "reference" / "gpus.csv")
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    shutil.copy(FIXTURES / "models.csv", raw / "reference" / "models.csv")
    listed: list[Path] = []

    def counted(root: Path, *args, **kwargs):
        listed.append(root)
        return discovery.discover(root, *args, **kwargs)

    monkeypatch.setattr(unchanged, "discover", counted)
    monkeypatch.setattr(resources, "discover", counted)
    assert main(["ingest", "--raw", str(raw), "--warehouse", str(warehouse)]) == 0
    assert listed == [raw]  # by the decision; the run's observation took that listing
    rows = {cells[0]: cells[1:3] for line in capsys.readouterr().out.splitlines()
            if line.startswith("| reference")
            for cells in [[c.strip() for c in line.strip("|").split("|")]]}
    # the second run: the new file loaded, the first unchanged (its listing was whole)
    assert rows == {"reference_gpus": ["0", "1"], "reference_models": ["1", "0"]}
