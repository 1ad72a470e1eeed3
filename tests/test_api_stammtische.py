"""Stammtische, players, rules, health and the token rules over HTTP."""

from __future__ import annotations

import hashlib

from conftest import PLAYERS, make_table


def test_health_says_ok_and_the_store_to_everyone_and_the_version_only_to_the_admin(client, app):
    r = client.get("/api/v1/health")
    assert r.status_code == 200
    assert r.json == {"status": "ok", "storage": app.config["STORAGE"]}
    app.config["ADMIN_TOKEN"] = "admin-geheim"
    r = client.get("/api/v1/health", headers={"Authorization": "Bearer admin-geheim"})
    assert r.json["version"] == "0.1.0" and r.json["storage"] == app.config["STORAGE"]
    assert r.json["sender"] == {
        "due": 0,
        "oldest_due_seconds": None,
        "waiting_seconds": None,
        "behind": False,
    }
    r = client.get("/api/v1/health", headers={"Authorization": "Bearer falsch"})
    assert r.status_code == 403 and r.mimetype == "application/problem+json"
    assert "version" not in r.get_data(as_text=True)


def test_creating_a_stammtisch_returns_its_token_once_and_stores_only_a_hash(client, app):
    r = client.post("/api/v1/stammtische", json={"name": "Knobelrunde Zur Post", "private": False})
    assert r.status_code == 201
    body = r.json
    assert body["slug"] == "knobelrunde-zur-post"
    assert body["rules"] == {"preset": "standard", "overrides": {}}
    assert len(body["token"]) >= 40
    read = client.get("/api/v1/stammtische/knobelrunde-zur-post")
    assert read.status_code == 200 and "token" not in read.json
    with app.app_context():
        from api.http.context import services

        stored = services().repo.get_stammtisch("knobelrunde-zur-post")
    assert stored.token_hash == hashlib.sha256(body["token"].encode()).hexdigest()
    assert body["token"] not in repr(stored)


def test_slugs_come_from_names_with_umlauts_and_never_collide(client):
    first = client.post("/api/v1/stammtische", json={"name": "Schöne Grüße"}).json
    second = client.post("/api/v1/stammtische", json={"name": "Schöne Grüße"}).json
    assert (first["slug"], second["slug"]) == ("schoene-gruesse", "schoene-gruesse-2")


def test_an_explicit_slug_that_is_taken_is_a_conflict(client):
    client.post("/api/v1/stammtische", json={"name": "A", "slug": "post"})
    r = client.post("/api/v1/stammtische", json={"name": "B", "slug": "post"})
    assert r.status_code == 409
    assert r.json["message"] == "Den Stammtisch „post“ gibt es schon."


def test_malformed_stammtisch_input_is_422_with_field_errors(client):
    r = client.post("/api/v1/stammtische", json={"name": "", "slug": "Nicht Gut!", "extra": 1})
    assert r.status_code == 422
    assert set(r.json["errors"]["json"]) == {"name", "slug", "extra"}
    assert r.json["code"] == "validation_failed" and r.json["status"] == 422


def test_unknown_house_rules_are_422_naming_the_option(client):
    r = client.post(
        "/api/v1/stammtische", json={"name": "A", "rules": {"overrides": {"jule": "acht"}}}
    )
    assert r.status_code == 422
    assert "jule" in r.json["errors"]["json"]["rules"]["overrides"]
    r = client.post("/api/v1/stammtische", json={"name": "A", "rules": {"overrides": {"x": 1}}})
    assert "x" in r.json["errors"]["json"]["rules"]["overrides"]
    both = {"two_dice": True, "sixes_turning": True}  # well-formed, but contradictory
    r = client.post("/api/v1/stammtische", json={"name": "A", "rules": {"overrides": both}})
    assert r.status_code == 422
    assert r.json["message"] == "Hausregeln „two_dice“ und „sixes_turning“ passen nicht zusammen."
    assert client.get("/api/v1/stammtische/a").status_code == 404  # nothing was created


def test_a_missing_stammtisch_is_404(client):
    r = client.get("/api/v1/stammtische/nirgends")
    assert r.status_code == 404
    assert r.json["message"] == "Keinen Stammtisch „nirgends“ gefunden."


def test_writes_need_the_token_none_is_401_another_stammtischs_is_403(client):
    post = make_table(client, "Post")
    krone = make_table(client, "Krone")
    url = f"{post.base}/players"
    r = client.post(url, json={"name": "Anna"})
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    r = client.post(url, json={"name": "Anna"}, headers=krone.auth)
    assert r.status_code == 403
    r = client.post(url, json={"name": "Anna"}, headers={"Authorization": "Basic x"})
    assert r.status_code == 401
    assert client.get(url).json == []  # nothing was written
    assert client.post(url, json={"name": "Anna"}, headers=post.auth).status_code == 201


def test_a_private_stammtisch_hides_everything_without_its_token(client):
    t = make_table(client, "Geheim", private=True)
    t.add_players(PLAYERS)
    game = t.start()
    nobody = "/api/v1/stammtische/nirgends"
    for path in ("", "/players", "/games", f"/games/{game}", f"/games/{game}/log"):
        # without its token a private Stammtisch answers as a slug nobody took: a 404 that
        # does not tell whether it exists (only the slug in the sentence differs)
        unknown = client.get(nobody + path).json
        for headers in ({}, {"Authorization": "Bearer falsch"}):
            r = t.get(path, headers=headers)
            assert r.status_code == 404, path
            assert r.json == {
                **unknown,
                "detail": unknown["detail"].replace("nirgends", t.slug),
                "message": unknown["message"].replace("nirgends", t.slug),
            }
        assert t.get(path, headers=t.auth).status_code == 200
    # writes too: neither a missing nor a wrong key learns that it exists
    for headers in ({}, {"Authorization": "Bearer falsch"}):
        r = client.post(f"{t.base}/players", json={"name": "Eve"}, headers=headers)
        assert r.status_code == 404 and r.json["code"] == "stammtisch_not_found"
    assert "Eve" not in [p["name"] for p in t.get("/players", headers=t.auth).json]


def test_house_rules_changes_affect_only_games_started_afterwards(table):
    before = table.start()
    r = table.patch("", {"rules": {"preset": "wolbeck", "overrides": {"deckel": 15}}})
    assert r.status_code == 200
    assert r.json["rules"] == {"preset": "wolbeck", "overrides": {"deckel": 15}}
    after = table.start()
    assert table.game(before)["rules"] == {"preset": "standard", "overrides": {}}
    assert table.game(before)["options"]["deckel"] == 13
    assert table.game(after)["rules"] == {"preset": "wolbeck", "overrides": {"deckel": 15}}
    assert table.game(after)["outcome"]["state"]["mitte"] == 15


def test_renaming_and_privacy_are_updated_and_bad_updates_change_nothing(table):
    r = table.patch("", {"name": "Neue Post", "private": True})
    assert (r.json["name"], r.json["private"]) == ("Neue Post", True)
    r = table.patch("", {"rules": {"preset": "unbekannt"}})
    assert r.status_code == 422
    assert table.get("", headers=table.auth).json["rules"]["preset"] == "standard"


def test_where_the_odds_are_shown_is_off_unless_changed_with_the_key(table, client):
    assert table.get("").json["odds_shown"] == "off"
    r = client.patch(table.base, json={"odds_shown": "form"})  # no key
    assert r.status_code == 401
    r = table.patch("", {"odds_shown": "form_and_tv"})
    assert (r.status_code, r.json["odds_shown"]) == (200, "form_and_tv")
    r = table.patch("", {"name": "Post"})  # not named: kept
    assert (r.json["name"], r.json["odds_shown"]) == ("Post", "form_and_tv")
    assert table.game(table.start())["rules"] == {"preset": "standard", "overrides": {}}
    for bad in ("on", "", None, True, ["form"]):
        r = table.patch("", {"odds_shown": bad, "name": "Nicht gespeichert"})
        assert r.status_code == 422 and r.mimetype == "application/problem+json"
        assert "odds_shown" in r.json["errors"]["json"], bad
    r = table.patch("", {"odds_shown": "on"})
    assert r.json["errors"]["json"]["odds_shown"] == ["Erlaubt: off, form, form_and_tv."]
    assert (r.json["code"], r.json["detail"]) == (
        "validation_failed",
        "Ungültige Eingabe: die Felder stehen unter errors.",
    )
    body = table.get("").json
    assert (body["name"], body["odds_shown"]) == ("Post", "form_and_tv")  # nothing written


def test_a_new_stammtisch_may_show_the_odds_from_the_start(client):
    r = client.post("/api/v1/stammtische", json={"name": "Adler", "odds_shown": "form"})
    assert (r.status_code, r.json["odds_shown"]) == (201, "form")
    r = client.post("/api/v1/stammtische", json={"name": "Hirsch", "odds_shown": "tv"})
    assert r.status_code == 422 and "odds_shown" in r.json["errors"]["json"]
    assert client.get("/api/v1/stammtische/hirsch").status_code == 404


# --------------------------------------------------------------------------- players
def test_players_are_added_listed_renamed_and_retired(table):
    listed = table.get("/players").json
    assert [p["name"] for p in listed] == PLAYERS
    anna = listed[0]["id"]
    r = table.patch(f"/players/{anna}", {"name": "Anne"})
    assert r.status_code == 200 and r.json["name"] == "Anne"
    r = table.patch(f"/players/{anna}", {"retired": True})
    assert r.json["retired"] is True and r.json["retired_at"] is not None
    assert table.get(f"/players/{anna}").json["name"] == "Anne"
    r = table.patch(f"/players/{anna}", {"retired": False})
    assert r.json["retired"] is False and r.json["retired_at"] is None


def test_a_player_name_is_unique_within_a_stammtisch(table, client):
    r = table.post("/players", {"name": "Anna"})
    assert r.status_code == 409
    bert = table.get("/players").json[1]["id"]
    assert table.patch(f"/players/{bert}", {"name": "Anna"}).status_code == 409
    other = make_table(client, "Krone")
    assert other.post("/players", {"name": "Anna"}).status_code == 201


def test_an_unknown_player_is_404_even_if_another_stammtisch_has_that_id(table, client):
    other = make_table(client, "Krone")
    (theirs,) = other.add_players(["Zoe"])
    assert table.get(f"/players/{theirs}").status_code == 404
    assert table.patch(f"/players/{theirs}", {"name": "X"}).status_code == 404


def test_a_retired_player_keeps_history_but_cannot_start_a_new_game(table):
    game = table.start()
    dieter = table.get("/players").json[3]["id"]
    table.patch(f"/players/{dieter}", {"retired": True})
    r = table.post("/games", {"players": PLAYERS, "starter": "Anna"})
    assert r.status_code == 409 and "Dieter" in r.json["message"]
    assert table.game(game)["players"] == PLAYERS


# --------------------------------------------------------------------------- rules
def test_presets_list_every_option_with_a_german_description(client):
    r = client.get("/api/v1/rules/presets")
    names = [p["name"] for p in r.json]
    assert names == ["standard", "wikipedia", "bvb", "hennef", "wolbeck", "party", "nrw"]
    wolbeck = client.get("/api/v1/rules/presets/wolbeck").json
    options = {o["key"]: o for o in wolbeck["options"]}
    assert options["jule"]["value"] == "sieben"
    assert options["deckel"]["description"].startswith("Anzahl der Deckel")
    assert len(options) == 21
    assert client.get("/api/v1/rules/presets/kneipe").status_code == 404


def test_evaluating_a_result_gives_category_name_deckel_and_key(client):
    r = client.post("/api/v1/rules/evaluate", json={"dice": [4, 1, 1], "hand": False})
    assert r.status_code == 200
    assert r.json["dice"] == "1-1-4"
    assert (r.json["category"], r.json["name"], r.json["deckel"]) == ("schock", "Schock 4", 4)
    general = client.post("/api/v1/rules/evaluate", json={"dice": [2, 2, 2]}).json
    schock2 = client.post("/api/v1/rules/evaluate", json={"dice": [1, 1, 2]}).json
    assert schock2["key"] > general["key"]
    bvb = {"preset": "bvb"}
    general = client.post("/api/v1/rules/evaluate", json={"dice": [2, 2, 2], "rules": bvb}).json
    schock2 = client.post("/api/v1/rules/evaluate", json={"dice": [1, 1, 2], "rules": bvb}).json
    assert general["key"] > schock2["key"]


def test_evaluate_rejects_bad_dice_and_unknown_options(client):
    url = "/api/v1/rules/evaluate"
    assert client.post(url, json={"dice": [7, 1, 1]}).status_code == 422
    assert client.post(url, json={"dice": [1, 1]}).status_code == 422  # three dice by default
    r = client.post(url, json={"dice": [1, 1], "rules": {"overrides": {"two_dice": True}}})
    assert r.status_code == 200 and r.json["name"] == "Schock aus"
    r = client.post(url, json={"dice": [1, 1, 1], "rules": {"overrides": {"zauber": 1}}})
    assert r.status_code == 422 and "zauber" in r.json["errors"]["json"]["rules"]["overrides"]
    r = client.post(url, json={"dice": [1, 1, 1], "hand": 1})
    assert r.status_code == 422 and "hand" in r.json["errors"]["json"]  # booleans are booleans
