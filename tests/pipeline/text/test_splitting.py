"""Sentence splitting of formatted text: quntoken for Hungarian (only asked where sentences
end), the rules for the rest, and the fallback when quntoken cannot be aligned."""
from __future__ import annotations

import logging
from pathlib import Path

from pipeline.text import quntoken
from pipeline.text.quntoken import split_paragraphs
from pipeline.text.splitting import split_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formatted_hu"


def test_hungarian_abbreviations_and_dates_do_not_end_sentences():
    text = ("Dr. Kovács János kb. 5 km-t gyalogolt 2021. jan. 5-én, almát, körtét stb. vett a piacon. "
            "Ez a második mondat! Harmadik?\n")
    assert split_paragraphs(text)[0] == [
        "Dr. Kovács János kb. 5 km-t gyalogolt 2021. jan. 5-én, almát, körtét stb. vett a piacon.",
        "Ez a második mondat!", "Harmadik?"]


def test_quntoken_never_introduces_replacement_characters():
    text = ("Tokió japánul 東京, arabul طوكيو, hindiül टोक्यो 😀 👨\u200d👩\u200d👧 és \ufeffjelekkel. "
            "Második mondat 🇭🇺 zászlóval. A \ufffd jel az eredetiben is ott volt.\n\n"
            "Új dokumentum 中文 szöveggel. \U0001F031 Dominó is. Vezérlő\x01 és\x00 NUL.\n")
    out, docs, sentences = split_text(text, "hu", "quntoken")
    assert docs == 2 and sentences >= 4
    assert out.count("\ufffd") == text.count("\ufffd") == 1
    for piece in ("東京", "طوكيو", "टोक्यो", "👨\u200d👩\u200d👧", "\ufeffjelekkel", "🇭🇺", "中文", "\U0001F031",
                  "Vezérlő\x01 és\x00 NUL."):
        assert piece in out
    assert out.replace("\n", " ").split() == text.replace("\n", " ").split()


def test_a_line_without_final_punctuation_still_ends_its_sentence():
    # quntoken alone would join "Története" onto the next line.
    assert split_paragraphs("Története\nA terület lakott volt.\n\nMásik cikk.\n") == [
        ["Története"], ["A terület lakott volt."], [], ["Másik cikk."], []]


def test_quntoken_batches_cut_at_documents_give_the_same_sentences(monkeypatch):
    text = (FIXTURES / "AA_wiki_00.txt").read_text(encoding="utf-8")
    whole = split_paragraphs(text)
    monkeypatch.setattr(quntoken, "BATCH_CHARS", 300)
    assert split_paragraphs(text) == whole and len(whole) == len(text.split("\n"))


def test_a_file_quntoken_misaligns_falls_back_to_the_rules_with_one_warning(monkeypatch, caplog):
    """Never lose text: if quntoken's output cannot be mapped back onto the input, that file is
    split by the rule-based splitter instead (and says so), not a crash."""
    monkeypatch.setattr(quntoken, "run_quntoken", lambda text: text + "extra")
    with caplog.at_level(logging.WARNING, logger="pipeline"):
        out, n_docs, n_sents = split_text("Ez az első mondat. Ez a második.\n\nÚj dokumentum.\n",
                                          "hu", "quntoken", "AA_wiki_00.txt")
    assert out == "Ez az első mondat.\nEz a második.\n\nÚj dokumentum.\n" and (n_docs, n_sents) == (2, 3)
    warnings = [r.message for r in caplog.records if "rule-based" in r.message]
    assert len(warnings) == 1 and "does not align" in warnings[0] and "AA_wiki_00.txt" in warnings[0]
