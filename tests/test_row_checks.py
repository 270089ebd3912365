"""The row-check factory (assets/row_checks.py): declarations, their SQL files, tunables."""

from __future__ import annotations

from importlib import resources

import pytest

from assets.row_checks import WARN, RowCheck, row_check
from assets.storage.checks import BANDWIDTH_MISMATCH_SQL
from pipelines.definitions import defs
from schemas.training import TRAINING_RUNS

# checks that are not row checks: the fresh check of every derived table, and GX suites
NOT_ROW_CHECKS = {"fresh", "business_rules"}


def test_every_check_sql_file_is_a_row_check_of_the_graph():
    """No orphan query: each file is named after a check of the graph (schema.table.check),
    but the one the three storage bandwidth checks share."""
    graph = defs.resolve_asset_graph()
    named = {".".join([*k.asset_key.path, k.name]) for k in graph.asset_check_keys
             if k.name not in NOT_ROW_CHECKS}
    files = {f.name.removesuffix(".sql")
             for f in resources.files("transforms.sql.checks").iterdir()
             if f.name.endswith(".sql")}
    shared = {"core.storage_measurements.bandwidth_is_bytes_over_time"}
    assert files - named == shared
    assert (resources.files("transforms.sql.checks") / f"{shared.pop()}.sql").read_text() \
        == BANDWIDTH_MISMATCH_SQL
    # 31 row checks: 26 with a file of their own, 4 sharing one, 1 a transform builds
    assert len(named) == 31 and len(named & files) == 26


def test_a_tunable_the_sizing_rules_lack_is_refused_when_declared():
    with pytest.raises(ValueError, match="max_efficiency is no SizingRules field"):
        row_check(RowCheck(TRAINING_RUNS, "a_check", WARN, "A summary.", "A detail.",
                           "rows", tunables=("max_efficiency",), sql="SELECT 1 WHERE false"))
