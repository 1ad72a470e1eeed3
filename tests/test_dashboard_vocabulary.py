"""The dashboard's vocabulary comes from the engine; the SQL and the fact tables must agree."""

from __future__ import annotations

import re
from fractions import Fraction

from api.rules import PRESETS, Category, Half, Phase, evaluate
from api.storage.records import FACT_COLUMNS
from dashboard import figures, site
from dashboard.stats import CATEGORIES, CATEGORY_NAMES, PROBABILITIES, SHORT_NAMES, queries
from schemas.statistics import _CATEGORY_DOC, CategoryCountsSchema


def test_the_categories_are_the_engines_in_its_order_without_the_special_results():
    assert CATEGORIES == tuple(c.value for c in Category if c is not Category.SPECIAL)
    assert list(CATEGORY_NAMES) == list(PROBABILITIES) == list(SHORT_NAMES) == list(CATEGORIES)


def test_the_category_names_are_the_engines_captions():
    assert SHORT_NAMES == {c: Category(c).caption for c in CATEGORIES}
    assert CATEGORY_NAMES[Category.SCHOCK] == f"{Category.SCHOCK.caption} (6 bis 2)"
    rules = PRESETS["standard"]
    for pips in ((1, 1, 1), (4, 1, 1), (4, 4, 4), (5, 4, 3), (6, 3, 2)):
        ev = evaluate(pips, False, rules)
        assert ev.name == ev.category.caption or ev.name.startswith(ev.category.caption + " ")


def test_the_statistics_schema_counts_the_dashboards_categories():
    assert tuple(CategoryCountsSchema().fields) == CATEGORIES
    assert all(c in _CATEGORY_DOC for c in CATEGORIES)


def test_the_categories_query_and_the_fact_table_count_the_same_categories():
    sql = queries()["categories"].sql
    assert tuple(re.findall(r"'(\w+)'(?: AS category)?, \w+(?: AS throws)? FROM fair", sql)) == (
        CATEGORIES
    )
    fair = [c for c in FACT_COLUMNS["player_game_facts"] if c.startswith("fair_")]
    assert fair == [f"fair_{c}" for c in CATEGORIES]


def test_names_and_probabilities_are_those_of_the_engines_evaluation():
    rules = PRESETS["standard"]
    for dice, category in [
        ((1, 1, 1), "schock_aus"),
        ((4, 4, 4), "general"),
        ((3, 4, 5), "strasse"),
    ]:
        assert SHORT_NAMES[category] == evaluate(dice, False, rules).name
    assert evaluate((4, 1, 1), False, rules).name.startswith(SHORT_NAMES["schock"] + " ")
    assert evaluate((6, 3, 2), False, rules).name.startswith(SHORT_NAMES["zahl"] + " ")
    assert sum(PROBABILITIES.values()) == 1
    assert PROBABILITIES["schock_aus"] == Fraction(1, 216)  # api/rules/RULES.md §2
    assert PROBABILITIES["strasse"] == Fraction(24, 216)


def test_the_output_keeps_its_labels():
    assert CATEGORY_NAMES == {
        "schock_aus": "Schock aus",
        "schock": "Schock (6 bis 2)",
        "general": "General",
        "strasse": "Straße",
        "zahl": "Zahl",
    }
    assert [figures.SHORT_NAMES[c] for c in CATEGORIES] == [
        "Schock aus", "Schock", "General", "Straße", "Zahl"
    ]  # fmt: skip
    assert PROBABILITIES["zahl"] == Fraction(171, 216)


def test_half_labels_name_the_engines_phases_as_the_fact_tables_write_them():
    assert set(site.HALF_NAMES) == {p.value for p in Phase} - {Phase.FINISHED.value}
    assert site.HALF_NAMES == {h.value: h.caption for h in Half}
    sql = queries()["record_deckel_half"].sql
    assert set(re.findall(r"'(half1|half2|finale)'", sql)) == set(site.HALF_NAMES)
