"""Names and reasons (api.rules.text): one normal form, nothing invisible, no look-alikes; the rules a name and a reason must follow. Counted nouns in German (api.rules.words)."""

from __future__ import annotations

import unicodedata

import pytest

from api.rules.text import name_key, name_problem, normalize_name, reason_problem
from api.rules.words import count

NFD_JUERGEN = "Ju\u0308rgen"
NFC_JUERGEN = "J\u00fcrgen"

LEER = "Der Name ist leer."
SCHREIBRICHTUNG = "Der Name enthält Steuerzeichen für die Schreibrichtung; bitte ohne sie eingeben."
VERSTECKT = "Der Name enthält unsichtbare Zeichen oder Steuerzeichen; bitte ohne sie eingeben."
UNSICHTBAR = "Der Name ist unsichtbar; bitte mit sichtbaren Buchstaben eingeben."
GEMISCHT = (
    "Der Name mischt lateinische, griechische oder kyrillische Buchstaben, die gleich "
    "aussehen (wie ein kyrillisches „А“ in „Anna“); bitte in einer Schrift schreiben."
)
GRUND_SCHREIBRICHTUNG = (
    "Der Grund enthält Steuerzeichen für die Schreibrichtung; bitte ohne sie eingeben."
)
GRUND_STEUERZEICHEN = (
    "Der Grund enthält Zeilenumbrüche oder Steuerzeichen; bitte in einer Zeile und "
    "ohne sie eingeben."
)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("", LEER, id="an empty name"),
        pytest.param(" \t\n ", LEER, id="only white space is an empty name"),
        pytest.param("\u202eanna", SCHREIBRICHTUNG, id="right-to-left override"),
        pytest.param("Anna\u2066x\u2069", SCHREIBRICHTUNG, id="an isolate"),
        pytest.param("\u200fAnna\u200b", SCHREIBRICHTUNG, id="a direction mark before all"),
        pytest.param("An\x00na", VERSTECKT, id="a control character (NUL)"),
        pytest.param("An\x7fna", VERSTECKT, id="a control character (DEL)"),
        pytest.param("\u200b", VERSTECKT, id="a zero-width space alone"),
        pytest.param("Anna\u200d", VERSTECKT, id="a zero-width joiner at the end"),
        pytest.param("\ufeffAnna", VERSTECKT, id="a byte-order mark"),
        pytest.param("\u3164", VERSTECKT, id="the Hangul filler: a letter that shows nothing"),
        pytest.param("Anna\u3164", VERSTECKT, id="the Hangul filler after a name"),
        pytest.param("\ue000", VERSTECKT, id="private use alone"),
        pytest.param("Anna\ue000", VERSTECKT, id="private use after a name"),
        pytest.param("Anna\ud800", VERSTECKT, id="a lone surrogate"),
        pytest.param("Anna\u0378", VERSTECKT, id="an unassigned code point"),
        pytest.param("\u0301", UNSICHTBAR, id="a lone combining mark"),
        pytest.param("\u0301 \u0308", UNSICHTBAR, id="only combining marks and a space"),
        pytest.param("\u0410nna", GEMISCHT, id="a Cyrillic А in Anna"),
        pytest.param("Ann\u03b1", GEMISCHT, id="a Greek α in Anna"),
        pytest.param("B\u0435rt", GEMISCHT, id="a Cyrillic е in Bert"),
        pytest.param("Anna \u0399\u03b2\u03b1\u03bd", GEMISCHT, id="Latin and Greek words"),
        pytest.param(
            "\u0418\u0432\u0430\u043d \u0396\u03b5\u03cd\u03c2", GEMISCHT, id="Cyrillic and Greek"
        ),
        pytest.param("A\u0411\u0392", GEMISCHT, id="all three alphabets"),
    ],
)
def test_a_name_that_is_empty_invisible_reordering_or_mixed_is_refused_with_its_reason(
    name, message
):
    """A name must show: not empty, no bidirectional controls, nothing invisible (control,
    format, private-use, surrogate, unassigned, blank letters), at least one visible
    character, and Latin, Greek and Cyrillic letters never mixed; the refusal says which."""
    assert name_problem(normalize_name(name)) == message


@pytest.mark.parametrize(
    "name",
    [
        "Anna",
        "Jürgen",
        "Иван Петров",
        "Ζεύς",
        "李小龙",
        "O'Neil-Smith",
        "Dieter 2",
        "😀",
        "7",
        "-",
        "Anna 李",  # Latin beside an alphabet without look-alikes
        "Ζεύς 李",
        "\U00017000",  # a Tangut ideograph: a letter without a character name
        "Anna \U00017000",
        "Zoë\u0301",  # a letter with a combining mark
        "Anna ҂",  # a Cyrillic sign beside Latin letters: a sign, not a letter
        "҂͵",  # a Cyrillic and a Greek sign: no letters, nothing mixed
    ],
)
def test_ordinary_names_in_any_one_script_are_fine(name):
    """Letters, digits, punctuation or symbols of one look-alike alphabet, or of any alphabet
    without look-alikes (Chinese, Tangut), make a valid name."""
    assert name_problem(normalize_name(name)) is None


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        (f"  {NFD_JUERGEN}   Müller ", f"{NFC_JUERGEN} Müller"),
        ("Anna\t\nMaria", "Anna Maria"),
        ("\u00a0Anna\u2003Maria\u3000", "Anna Maria"),
        ("Anna", "Anna"),
        ("ANNA", "ANNA"),  # case is kept; only the key folds it
        ("\ufb01", "\ufb01"),  # NFC, not NFKC: the ligature stays
    ],
)
def test_a_name_is_stored_in_nfc_with_single_spaces_and_no_space_at_either_end(typed, stored):
    """The normal form of a name: Unicode NFC, every run of white space one space, trimmed."""
    assert normalize_name(typed) == stored
    assert unicodedata.is_normalized("NFC", normalize_name(typed))


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (NFD_JUERGEN, "JÜRGEN"),
        (NFD_JUERGEN, NFC_JUERGEN),
        ("ANNA", "Anna"),
        ("\u0410\u0412\u0421", "ABC"),  # all-Cyrillic look-alike
        ("\u0391\u0392\u0395", "abe"),  # all-Greek look-alike
        ("\ufb01sch", "fisch"),  # compatibility form: the ligature is f + i
        ("  Anna   Maria ", "Anna Maria"),
        ("Anna\u00a0Maria", "anna maria"),
        ("Straße", "STRASSE"),
    ],
)
def test_names_equal_by_normal_form_case_or_look_alike_letters_have_one_key(one, other):
    """Two names are compared by their key: compatibility form, case-folded, Greek and
    Cyrillic look-alikes read as Latin, white space as in the normal form."""
    assert name_key(one) == name_key(other)


@pytest.mark.parametrize(
    ("one", "other"), [("Anna", "Anne"), ("Anna Maria", "AnnaMaria"), ("Jürgen", "Jurgen")]
)
def test_different_names_have_different_keys(one, other):
    """Names that a reader tells apart stay apart."""
    assert name_key(one) != name_key(other)


def test_a_name_key_is_lower_case_with_single_spaces():
    """The key itself: case-folded, look-alikes as Latin, no space at either end."""
    assert name_key("  \u0410NNA   Maria ") == "anna maria"


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("zu\nfrüh", GRUND_STEUERZEICHEN),
        ("a\x00b", GRUND_STEUERZEICHEN),
        ("\x1b[31mrot", GRUND_STEUERZEICHEN),
        ("tab\tbed", GRUND_STEUERZEICHEN),
        ("\u202etxet", GRUND_SCHREIBRICHTUNG),
        ("zu\n\u202efrüh", GRUND_SCHREIBRICHTUNG),  # the direction controls are named first
        ("a\u2066b\u2069", GRUND_SCHREIBRICHTUNG),
    ],
)
def test_reasons_with_control_characters_are_refused_with_their_reason(reason, message):
    """A reason is one line of visible text: no control characters, no direction controls."""
    assert reason_problem(reason) == message


@pytest.mark.parametrize("reason", ["zu frühes Aufdecken (2. Mal!)", "", "ΑΒΓ und АБВ"])
def test_an_ordinary_reason_is_fine(reason):
    """Any free text on one line is a reason, mixed alphabets and format characters included."""
    assert reason_problem(reason) is None


@pytest.mark.parametrize(
    ("n", "one", "many", "text"),
    [
        (1, "Spiel", "Spiele", "1 Spiel"),
        (0, "Spiel", "Spiele", "0 Spiele"),
        (2, "Hälfte", "Hälften", "2 Hälften"),
        (3, "Hälfte", "Hälften", "3 Hälften"),
        (1.0, "Deckel", "Deckel", "1 Deckel"),
        (0.5, "Zug", "Züge", "0 Züge"),  # a fraction is plural, however it is rounded
        (1200, "Zug", "Züge", "1.200 Züge"),
        (44086, "Zug", "Züge", "44.086 Züge"),
        (1234567, "Wurf", "Würfe", "1.234.567 Würfe"),
        (999, "Wurf", "Würfe", "999 Würfe"),
    ],
)
def test_a_counted_noun_is_singular_for_exactly_one_and_groups_thousands_with_dots(
    n, one, many, text
):
    """German counted nouns: the singular for exactly one, the plural otherwise (0, 2, a
    fraction), thousands grouped with a dot and no decimals (``44.086 Züge``)."""
    assert count(n, one, many) == text
