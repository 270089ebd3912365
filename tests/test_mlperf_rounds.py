"""One choice of a round's rules for every MLPerf suite (schemas/mlperf_rounds)."""

from __future__ import annotations

import pytest

from schemas.mlperf_rounds import applied, canonical_round, round_key

ROUNDS = {"v4.0": "rules 4.0", "v4.1": "rules 4.1", "v5.1": "rules 5.1"}


@pytest.mark.parametrize(("written", "canonical"), [
    ("v5.1", "v5.1"), ("5.1", "v5.1"), ("V4.0", "v4.0"), ("v4", "v4.0"), ("v5.1.0", "v5.1"),
    ("v10.0", "v10.0"), ("", None), ("latest", None), (None, None)])
def test_rounds_are_spelled_one_way(written, canonical):
    assert canonical_round(written) == canonical


def test_rounds_sort_by_number_not_text():
    assert round_key("v10.0") > round_key("v5.1") > round_key("v5.0") == round_key("v5")


def test_a_declared_round_applies_its_own_rules():
    rules = applied("training", ROUNDS, "5.1")
    assert (rules.round, rules.asked, rules.rules, rules.warning) == \
        ("v5.1", "v5.1", "rules 5.1", None)
    assert rules.exact


def test_an_undeclared_round_takes_the_nearest_earlier_one_and_says_so():
    rules = applied("training", ROUNDS, "v5.0")
    assert (rules.round, rules.rules) == ("v4.1", "rules 4.1")
    assert rules.warning == ("MLPerf training v5.0 has no rules declared here: scored with "
                             "the v4.1 rules (the nearest earlier round declared)")
    assert applied("training", ROUNDS, "v6.0").round == "v5.1"


def test_a_round_before_every_declared_one_takes_the_earliest():
    rules = applied("inference", ROUNDS, "v3.1")
    assert rules.round == "v4.0"
    assert rules.warning.endswith("(the earliest round declared)")


def test_an_unknown_round_takes_the_latest_and_says_so():
    rules = applied("storage", ROUNDS, None)
    assert (rules.round, rules.asked) == ("v5.1", None)
    assert rules.warning == ("the round is not known: scored with the MLPerf storage v5.1 "
                             "rules (the latest declared)")
    assert applied("storage", ROUNDS, "next").warning.startswith("round 'next' is not a round")


def test_an_empty_table_is_a_programming_error():
    with pytest.raises(ValueError):
        applied("training", {}, "v4.0")
