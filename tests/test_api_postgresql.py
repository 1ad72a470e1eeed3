"""The HTTP layer on PostgreSQL: one smoke test per resource. The HTTP and web suites run on
SQLite (tests/conftest.py, ``HTTP_STORE``); what differs between the stores is the storage
tests' (every store). Each test here runs a resource's main tests of its own suite on a fresh
PostgreSQL database (of the worker's throwaway cluster, tests/pgcluster.py), through the same
fixtures: stammtische, players, games and turns, the small slips of the contract, the event
stream, webhooks, statistics, calling a game off, import and export, and the pub form (log in,
a turn)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import test_api_abandon as abandon
import test_api_events as events
import test_api_games as games
import test_api_slips as slips
import test_api_stammtische as stammtische
import test_stats_api as stats
import test_web_pages as pages
import test_webhooks_api as webhooks
from conftest import PLAYERS, Table, make_table
from flask import Flask
from test_stats_api import stats_app  # noqa: F401  (fixture)

pytestmark = pytest.mark.stores("postgresql")

_TABLES = itertools.count(1)


def fresh(client: Any) -> Table:
    """Another Stammtisch with the four players, for a test that counts what it holds."""
    t = make_table(client, name=f"Tisch {next(_TABLES)}")
    t.add_players(PLAYERS)
    return t


def test_stammtische(client: Any, app: Flask) -> None:
    assert app.config["STORAGE"] == "postgresql"
    stammtische.test_health_says_ok_and_the_store_to_everyone_and_the_version_only_to_the_admin(
        client, app
    )
    stammtische.test_creating_a_stammtisch_returns_its_token_once_and_stores_only_a_hash(
        client, app
    )
    stammtische.test_slugs_come_from_names_with_umlauts_and_never_collide(client)
    stammtische.test_writes_need_the_token_none_is_401_another_stammtischs_is_403(client)
    stammtische.test_a_private_stammtisch_hides_everything_without_its_token(client)


def test_players(table: Table, client: Any) -> None:
    stammtische.test_players_are_added_listed_renamed_and_retired(table)
    stammtische.test_a_player_name_is_unique_within_a_stammtisch(fresh(client), client)


def test_games_and_turns(app: Flask, table: Table) -> None:
    games.test_a_round_moves_deckel_and_returns_german_domain_events(table)
    games.test_a_forbidden_move_is_409_with_the_rule_and_changes_nothing(app, table)
    games.test_a_throw_by_throw_turn_stays_open_until_the_player_stops(table)
    games.test_undo_removes_the_last_entry_and_keeps_an_audit_record(app, table)
    games.test_games_are_listed_newest_first_filtered_and_paginated(fresh(table.client))


def test_slips(table: Table) -> None:
    slips.test_a_started_game_carries_its_etag_and_the_first_turn_can_send_it(table)
    slips.test_an_imported_game_carries_its_etag(table)


def test_event_stream(app: Flask, table: Table) -> None:
    events.test_a_private_stammtisch_streams_only_with_its_token_or_login(app)
    app.config["EVENT_STREAM_SECONDS"] = 0  # what is stored, then the stream ends
    events.test_one_message_per_event_with_the_id_on_the_last_of_each_entry(table)
    events.test_resume_after_the_last_id_from_the_stored_log(fresh(table.client))
    events.test_a_stream_goes_on_with_what_is_written_meanwhile(app, fresh(table.client))


def test_webhooks(table: Table, client: Any) -> None:
    webhooks.test_registering_answers_the_secret_once_and_lists_without_it(table)
    webhooks.test_change_pause_rotate_and_delete(fresh(client))
    webhooks.test_ping_shows_in_the_delivery_log_and_can_be_redelivered(fresh(client))


def test_statistics(stats_app: Flask) -> None:  # noqa: F811  (the imported fixture)
    stats.test_verlierer_and_player_numbers_match_the_games_recorded(stats_app)
    stats.test_a_malformed_year_is_422(stats_app)


def test_abandon(table: Table) -> None:
    abandon.test_a_running_game_is_called_off_and_refuses_every_further_entry(table)
    abandon.test_the_game_stream_sends_game_abandoned_after_the_last_entry(fresh(table.client))


def test_import_and_export(table: Table, capsys: Any, tmp_path: Any) -> None:
    games.test_an_imported_log_exports_identically_and_creates_missing_players(table)
    games.test_an_api_game_exports_a_log_that_replays_to_the_same_outcome(table, capsys, tmp_path)
    games.test_a_bad_import_names_the_event_and_stores_nothing(fresh(table.client))


def test_the_form_logs_in_and_records_a_turn(app: Flask) -> None:
    pages.test_logging_in_needs_the_right_key_and_logging_out_forgets_it(app)
    web = pages.Browser(app)
    slug, _token = pages.create(web, name="Zur Linde", opt_deckel="3")
    pages.add_players(web, slug)
    game = pages.start(web, slug)
    pages.test_a_turn_takes_three_dice_and_one_throws_button_and_is_announced_like_the_engine(
        web, app, (slug, game)
    )
