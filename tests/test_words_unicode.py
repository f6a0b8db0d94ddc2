"""Words for every script (definitions §0, issues 61 and 74), without Spark: one Unicode form,
marks kept with their letters, spaceless scripts cut into words, Thai-family letters into units
whose boundaries depend only on the letters around them, invisible characters ignored.
Properties by Hypothesis; the issues' sentences as examples."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiltdetect.kernel.unicode import (
    CUT_WINDOW,
    LETTER,
    MARK,
    batch_unit_starts,
    code_point_classes,
    compose,
    normalise,
    unit_starts,
)
from quiltdetect.kernel.words import batch_word_hashes, term_hashes, words
from quiltdetect.review.highlight import NONE, highlight, word_spans

# Letters of many scripts, their combining marks, invisible characters, compatibility forms.
ALPHABET = ("abcXYZ019 .,-'\n"
            "éèñçÅßΙᾼ" "\u0301\u0308\u0323\u0316\u0345\u031b"  # Latin, Greek, combining accents
            "\u093c\u094d\u09be\u09c7\u0654\u064e\u0651\u0e33\u0e48\u0e38"  # nukta, virama, ো's parts, hamza, harakat, ำ
            "ΣσςΐΑ" "кириллица" "עִבְרִית" "عَرَبِيّ"  # Greek, Cyrillic, Hebrew and Arabic with points
            "हिन्दीक्ष" "বাংলা" "தமிழ்"  # Devanagari, Bengali, Tamil (virama, vowel signs)
            "ภาษาไทยไม่มีช่องว่างคำ" "ລາວ" "ខ្មែរ" "မြန်မာ" "བོད་"  # Thai, Lao, Khmer, Myanmar, Tibetan
            "中文字日本語のカタカナー々" "한국어\u1100\u1161\u11a8"  # Han, Kana, Hangul and jamo
            "ＡＢｃ１２　ﬁ½™①ｶﾞ" "\u00ad\u200b\u200c\u200d\u2060\ufeff\u202e\ufe0f"  # compatibility, invisible
            "😀𝔘𝟘")
texts = st.text(alphabet=ALPHABET, max_size=80)
SCRIPTS = Path(__file__).parent / "data" / "scripts"  # real paragraphs, one file per script


@given(texts)
@settings(max_examples=500, deadline=None)
def test_normalising_is_idempotent_and_case_blind(text):
    once = normalise(text)
    assert normalise(once) == once
    assert normalise(text.upper()) == normalise(text.lower()) or normalise(normalise(text.upper())) == normalise(
        text.upper())  # (upper-casing is not always reversible: ΐ)
    assert compose(compose(text)) == compose(text)


@given(texts)
@settings(max_examples=500, deadline=None)
def test_every_unicode_form_of_a_text_has_the_same_words(text):
    expected = words(text)
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        assert words(unicodedata.normalize(form, text)) == expected, form
    assert words(normalise(text)) == expected


@given(texts)
@settings(max_examples=500, deadline=None)
def test_no_word_starts_with_a_mark_it_took_from_the_letter_before(text):
    """A grapheme cluster (a letter and its combining marks) is never split: between two words
    that touch, the second never starts with a combining mark."""
    normal = normalise(text)
    classes = code_point_classes()
    position = 0
    for word in words(text):
        at = normal.index(word, position)
        if at == position and at > 0 and normal[at - 1] != " ":
            assert classes[ord(word[0])] != MARK, (normal, word)
        position = at + len(word)


@given(st.lists(texts, max_size=8))
@settings(max_examples=300, deadline=None)
def test_the_numpy_path_equals_the_definition_on_every_script(batch):
    hashes, counts = batch_word_hashes(batch)
    assert counts.tolist() == [len(words(t)) for t in batch]
    expected = np.concatenate([term_hashes(words(t)) for t in batch]) if batch else np.empty(0, np.uint64)
    assert np.array_equal(hashes, expected)


@given(texts)
@settings(max_examples=400, deadline=None)
def test_the_review_tools_spans_hold_the_same_words(text):
    tokens, spans = word_spans(text)
    assert tokens == words(text)
    for token, (start, end) in zip(tokens, spans.tolist(), strict=True):
        assert token in normalise(text[start:end])


@given(texts, st.sampled_from(["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]), st.data())
@settings(max_examples=300, deadline=None)
def test_invisible_characters_inside_words_hide_nothing(text, invisible, data):
    cut = data.draw(st.integers(0, len(text)))
    assert words(text[:cut] + invisible + text[cut:]) == words(text)


def test_the_issues_sentences():
    """The table of issue 61: before, Hindi fell apart at its vowel signs, Thai at its tone
    marks, a Chinese or Japanese clause was one word, NFD and full-width forms were other words."""
    assert words("हिन्दी भारत की राजभाषा है") == ["हिन्दी", "भारत", "की", "राजभाषा", "है"]
    # (issue 74: Thai units cut where the letters around a place say, not every 4 letters)
    assert words("ภาษาไทยไม่มีช่องว่างระหว่างคำ") == ["ภาษ", "าไทยไ", "ม่มีช่อง", "ว่างระหว่า", "งคํา"]
    assert words("我们今天去北京。明天回上海") == list("我们今天去北京明天回上海")
    assert words("東京都は日本の首都です") == list("東京都は日本の首都です")
    assert words("コーヒー") == ["コ", "ー", "ヒ", "ー"]
    nfd = unicodedata.normalize("NFD", "Tiếng Việt")
    assert words(nfd) == words("Tiếng Việt") == ["tiếng", "việt"]
    assert words("ＦＵＬＬ　ＷＩＤＴＨ") == words("full width") == ["full", "width"]
    assert words("co\u00adpy zero\u200bwidth") == ["copy", "zerowidth"]
    assert words("한국어 텍스트") == ["한국어", "텍스트"]
    assert words("བོད་ཡིག") == ["བོད", "ཡིག"]  # Tibetan syllables, marked by the tsheg
    assert words("عَرَبِيّ عربي") == ["عَرَبِيّ", "عربي"]  # vowel points stay in the word (and make another word)
    assert words("STRASSE Straße straße") == ["strasse"] * 3
    assert words("ΣΊΣΥΦΟΣ σίσυφος") == ["σίσυφοσ"] * 2


def test_one_script_never_shares_a_word_with_another_by_accident():
    """No empty or one-character token from punctuation, marks or invisible characters: the
    words of pages in different scripts only meet on what both really write (digits, Latin)."""
    pages = {
        "zh": "我们今天去北京。明天回上海，然后去广州！",
        "ja": "東京都は日本の首都です。コーヒーを飲みます。",
        "th": "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
        "hi": "हिन्दी भारत की राजभाषा है।",
        "ar": "اللُّغَةُ العَرَبِيَّةُ جَمِيلَةٌ.",
        "ko": "한국어는 아름답다.",
        "vi": "Tiếng Việt rất đẹp.",
    }
    vocab = {lang: set(words(text)) for lang, text in pages.items()}
    for lang, found in vocab.items():
        assert "" not in found and all(normalise(w) == w for w in found)
        for other, theirs in vocab.items():
            if other != lang and {lang, other} != {"zh", "ja"}:  # (Chinese and Japanese share Han)
                assert not found & theirs, (lang, other, found & theirs)


def test_a_run_made_under_the_old_words_is_refused_as_previous(tmp_path):
    """Its stored grams were cut by the old word rule: an update would mix two definitions."""
    import json

    import pytest

    from quiltdetect.common.config import ConfigError
    from quiltdetect.documents.table import DEFINITIONS
    from quiltdetect.quilts.config import QuiltConfig
    from quiltdetect.quilts.job import QuiltsJob

    cfg = QuiltConfig(inputs=[str(tmp_path / "week2")], output=str(tmp_path / "w2"))
    old = tmp_path / "w1"
    old.mkdir()
    (old / "_COMPLETE").write_text(json.dumps({"job": "quilts", "config": {}, "inputs_key": "x", "run_id": "r"}))
    with pytest.raises(ConfigError, match=r"older definition of documents and words .*run once without --previous"):
        QuiltsJob(cfg).open_previous(None, str(old))
    # a run under words-2 (Thai-family words of 4 letters from the run's start: issue 74)
    (old / "_COMPLETE").write_text(json.dumps({"job": "quilts", "config": {}, "inputs_key": "x", "run_id": "r",
                                               "definitions": {**DEFINITIONS, "words": "words-2"}}))
    with pytest.raises(ConfigError, match=r"older definition of words \(words words-2; this version uses words-3: "
                                          r"docs/definitions.md §0\).*run once without --previous"):
        QuiltsJob(cfg).open_previous(None, str(old))
    (old / "_COMPLETE").write_text(json.dumps({"job": "quilts", "config": {}, "definitions": DEFINITIONS}))
    with pytest.raises(ConfigError, match="-k is 5 but the previous run"):  # past the definitions, to the settings
        QuiltsJob(cfg).open_previous(None, str(old))


@given(st.lists(texts, min_size=1, max_size=6), st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_texts_that_normalising_lengthens_are_counted_in_their_place(batch, where):
    """``ß``, ``ﬁ``, ``½`` lengthen a text: the batch is joined again, and the capitals folded
    in numpy in the texts after it (``É``, ``Σ``) move with them."""
    batch = list(batch)
    batch.insert(min(where, len(batch)), "Filler WORDS É " * 200)
    batch.insert(min(where + 1, len(batch)), "Straße ﬁne ½ ΣΑΣ straße")
    batch.append("ÉCOLE Σοφία Ünïcode")
    hashes, counts = batch_word_hashes(batch)
    assert counts.tolist() == [len(words(t)) for t in batch]
    assert np.array_equal(hashes, np.concatenate([term_hashes(words(t)) for t in batch]))


def test_a_batch_of_every_script_equals_the_definition():
    """Whole paragraphs of real text, many in one batch as the job hashes them: a word at each
    Chinese or Japanese character puts tens of thousands of words inside runs of word bytes."""
    paragraphs = [p for path in sorted(SCRIPTS.glob("*.txt"))
                  for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    batch = [*paragraphs, "Straße ½ ÉCOLE", *paragraphs, None, ""]
    hashes, counts = batch_word_hashes(batch)
    assert counts.tolist() == [len(words(t)) for t in batch]
    assert int(counts.sum()) > 20_000
    assert np.array_equal(hashes, np.concatenate([term_hashes(words(t)) for t in batch]))


def _passage(text: str, length: int, spaced: bool) -> str:
    """``length`` characters from the middle of ``text``, cut at spaces where it has them."""
    start = len(text) // 3
    end = start + length
    if spaced:
        start, end = text.index(" ", start) + 1, text.index(" ", end)
    else:  # (not inside a number or a Latin word)
        while text[start - 1:start + 1].isascii() and text[start - 1:start + 1].isalnum():
            start += 1
        while text[end - 1:end + 1].isascii() and text[end - 1:end + 1].isalnum():
            end += 1
    return text[start:end]


def _inside(part: list[str], whole: list[str]) -> bool:
    return any(whole[i:i + len(part)] == part for i in range(len(whole) - len(part) + 1))


@pytest.mark.parametrize("script, length", [("zh", 40), ("ja", 40), ("hi", 120), ("th", 120)])
def test_the_review_tool_colours_each_patch_of_a_cjk_or_indic_quilt_by_its_source(script, length):
    """A quilt of passages of three real pages, joined by characters of no source: every
    passage is coloured whole by its source, nothing else is, no piece starts inside a
    character's marks, and each source shows the passage the quilt took from it."""
    pages = [p for p in (SCRIPTS / f"{script}.txt").read_text(encoding="utf-8").split("\n\n") if p.strip()][:3]
    passages = [_passage(page, length, script in ("hi", "th")) for page in pages]
    # a word of no source between passages (punctuation alone would let a gram run on from one
    # passage into the next, which a source may really hold: Thai "และ", "and", ends many a phrase)
    glue = " ### 間 ### " if script in ("hi", "th") else "「＃＃＃」"
    quilt = "序 " + glue.join(passages) + " 跋"
    lit = highlight(quilt, pages, 5)
    assert "".join(piece for piece, _ in lit.segments) == quilt
    coloured = [(piece, colour) for piece, colour in lit.segments if colour != NONE]
    assert [colour for _, colour in coloured] == [0, 1, 2]
    for (piece, colour), planted in zip(coloured, passages, strict=True):
        assert words(piece) == words(planted), (piece, planted)
        assert _inside(words(piece), words(pages[colour]))
    classes = code_point_classes()
    for piece, _ in lit.segments:  # a patch's edges fall between graphemes
        assert classes[ord(piece[0])] != MARK, piece
    for rank, match in enumerate(lit.sources):
        shown = [piece for piece, colour in match.segments if colour == rank]
        assert words(passages[rank]) in [words(piece) for piece in shown]
        for piece in shown:  # (a phrase the page repeats is shown wherever it stands)
            assert _inside(words(piece), words(quilt)), piece


def test_marks_that_an_invisible_character_kept_apart_are_put_in_canonical_order():
    """``'่\u200b်'``: once the zero-width space is gone, a Thai tone mark (class 107) stands
    before a Myanmar asat (class 9), and NFKC reorders them; the numpy path must too (found by
    Hypothesis in test_kernel.py)."""
    for text in ["\u0e48\u200b\u103a", "a\u0e48\u00ad\u103ab", "x\u0301\u2060\u0316"]:
        hashes, counts = batch_word_hashes([text, "plain " + text])
        assert counts.tolist() == [len(words(text)), len(words("plain " + text))]
        assert np.array_equal(hashes, np.concatenate([term_hashes(words(text)), term_hashes(words("plain " + text))]))


# Letters and marks of the four scripts whose runs of letters are cut into units, no spaces.
LETTERS_ALPHABET = ("กขคงจฉชซดตถทนบปผพฟมยรลวศสหอฮเแโใไะาำ" "\u0e31\u0e34\u0e35\u0e36\u0e37\u0e38\u0e39\u0e47\u0e48\u0e49\u0e4c"
                    "ກຂຄງຈສຊຍດຕຖທນບປຜພຟມຢຣລວຫອຮ" "\u0eb1\u0eb4\u0eb5\u0ec8\u0ec9"
                    "កខគឃងចឆជឈញដឋឌឍណតថទធនបផពភមយរលវសហឡអ" "\u17b6\u17b7\u17b8\u17c1\u17d2\u17cb"
                    "ကခဂဃငစဆဇဈညဋဌဍဎဏတထဒဓနပဖဗဘမယရလဝသဟဠအ" "\u102b\u102c\u102d\u102f\u1031\u1036\u1037\u1039\u103a\u103b")
letter_runs = st.text(alphabet=LETTERS_ALPHABET, min_size=1, max_size=120)


def _letter_cuts(text: str) -> tuple[list[int], set[int]]:
    """(the indices of ``text``'s letters, the indices of those that start a unit by the
    definition): ``text`` is one run of letters and marks."""
    classes = code_point_classes()
    at = [i for i, c in enumerate(text) if classes[ord(c)] == LETTER]
    starts = unit_starts([ord(text[i]) for i in at])
    return at, {i for i, cut in zip(at, starts, strict=True) if cut}


@given(st.lists(letter_runs, min_size=1, max_size=6))
@settings(max_examples=300, deadline=None)
def test_the_numpy_unit_starts_equal_the_definition_over_many_runs(runs):
    """``batch_unit_starts`` (the job's path) is ``unit_starts`` run by run, whatever the runs'
    lengths (windows that would reach into the run before or after)."""
    points = [[ord(c) for c in r if code_point_classes()[ord(c)] == LETTER] for r in runs]
    points = [p for p in points if p]
    flat = np.array([x for p in points for x in p], dtype=np.int64)
    first = np.array([j == 0 for p in points for j in range(len(p))], dtype=bool)
    want = [x for p in points for x in unit_starts(p)]
    assert batch_unit_starts(flat, first).tolist() == want


@given(letter_runs.filter(lambda t: code_point_classes()[ord(t[0])] == LETTER), st.data())
@settings(max_examples=300, deadline=None)
def test_a_copy_starting_anywhere_has_the_sources_units_from_its_first_boundary_inside(source, data):
    """definitions §0: a unit boundary depends only on the letters around it, so a passage cut
    out of a phrase at any letter has the source's boundaries from its (CUT_WINDOW + 1)-th letter
    on, and every boundary the source has inside it; its words there are the source's words."""
    at, cuts = _letter_cuts(source)
    a = data.draw(st.sampled_from(at), label="copy starts at letter")
    b = data.draw(st.integers(a + 1, len(source)), label="copy ends before")
    copy = source[a:b]
    copy_at, copy_cuts = _letter_cuts(copy)
    inside = [i + a for i in copy_at]
    copy_cuts = {i + a for i in copy_cuts}
    assert cuts & set(inside[1:]) <= copy_cuts  # the source's boundaries are kept
    middle = set(inside[CUT_WINDOW + 1:len(inside) - CUT_WINDOW])
    assert copy_cuts & middle == cuts & middle  # and, away from its ends, no other one
    # so the units between two boundaries there are words of both
    inner = sorted(copy_cuts & middle)
    source_words, copy_words = set(words(source)), set(words(copy))
    for x, y in zip(inner, inner[1:], strict=False):
        assert normalise(source[x:y]) in source_words & copy_words


def test_thai_units_are_about_an_english_word_and_unit_boundaries_at_least_three_letters_apart():
    """On the real Thai and Myanmar prose: about five characters a unit (English: 5.8 with its
    space), never two boundaries inside a run closer than CUT_WINDOW + 1 letters."""
    for name in ("th.txt", "th-xquad.txt", "my.txt"):
        text = (SCRIPTS / name).read_text(encoding="utf-8")
        units = words(text)
        assert 3.5 < len(text) / len(units) < 7.0, name
        for run in normalise(text).split():
            at, cuts = _letter_cuts(run)
            position = {i: n for n, i in enumerate(at)}
            inner = sorted(position[i] for i in cuts if i != at[0])
            assert all(y - x > CUT_WINDOW for x, y in zip(inner, inner[1:], strict=False)), run


@given(st.lists(st.text(alphabet=LETTERS_ALPHABET + "  a1.\u200b", max_size=200), max_size=6))
@settings(max_examples=200, deadline=None)
def test_the_numpy_path_equals_the_definition_on_long_runs_of_letters(batch):
    """Long phrases of Thai, Lao, Khmer and Myanmar letters and marks, with spaces, Latin and
    invisible characters between them: the job's words are the definition's."""
    hashes, counts = batch_word_hashes(batch)
    assert counts.tolist() == [len(words(t)) for t in batch]
    expected = np.concatenate([term_hashes(words(t)) for t in batch]) if batch else np.empty(0, np.uint64)
    assert np.array_equal(hashes, expected)


def test_code_points_the_tables_skip_have_no_properties():
    """The tables' loops visit only the code points Unicode lists (``unicode._assigned``): every
    other one (unassigned, private use, surrogate) must case-fold, normalise and decompose to
    itself with combining class 0, or a table would miss it."""
    from quiltdetect.kernel import unicode

    listed = np.zeros(unicode.FULL, dtype=bool)
    listed[unicode._assigned(unicode.FULL)] = True
    for p in np.flatnonzero(~listed).tolist():
        c = chr(p)
        assert c.casefold() == c and unicodedata.combining(c) == 0 and not unicodedata.decomposition(c), hex(p)
        assert unicodedata.normalize("NFKC", c) == c, hex(p)
    assert unicode.ignorable(unicode.FULL).tolist() == [
        unicodedata.category(chr(p)) == "Cf" or bool(f) for p, f in enumerate(unicode._in(unicode._IGNORABLE_RANGES,
                                                                                        unicode.FULL).tolist())]
