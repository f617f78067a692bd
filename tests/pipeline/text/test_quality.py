"""The corpus quality measures that bench/ prints and `pipeline report` shows."""
from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.text.quality import MEASURES, failing, line_measures, long_articles_lost, measure_corpus


def write(folder: Path, name: str, docs: list[list[str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("\n\n".join("\n".join(d) for d in docs) + "\n", encoding="utf-8")


def test_each_line_measure_counts_its_kind(tmp_path):
    good = [f"Звичайне речення номер {i} про щось цікаве." for i in range(6)]
    bad = ["Текст з [[посиланням]] лишився.", "* пункт списку тут", '"version": 2,',
           "Січень | Лютий | Березень", "Місто велике.[12]", "Місто () велике.", "Дужка (не закрита тут.",
           good[0]]
    write(tmp_path, "a.txt", [good, bad, ["Одне речення тут стоїть само собою."]])
    result = line_measures(tmp_path)
    m = result["measures"]
    assert result["lines"] == 15 and result["documents"] == 3
    for key in ("markup", "bullet", "json", "navbox", "footnote", "empty_bracket"):
        assert m[key] == pytest.approx(10_000 / 15), key
    assert m["unbalanced"] == pytest.approx(1 / 15)  # "Дужка (не закрита тут."
    assert m["one_sentence_docs"] == pytest.approx(1 / 3)
    assert m["repeated_lines"] == pytest.approx(1 / 11)  # of the 11 lines over 20 characters
    assert result["examples"]["footnote"] == ["Місто велике.[12]"]
    assert {f.key for f in failing(m)} >= {"markup", "bullet", "one_sentence_docs"}


def test_long_articles_lost_counts_own_text_only(tmp_path):
    prose = [f"Речення {i} довгої статті про історію міста і його людей, їхню працю та життя." for i in range(60)]
    other = [f"Інше речення {i} другої статті про річку, її береги та мости через неї." for i in range(60)]
    write(tmp_path / "formatted", "a.txt", [prose, other])
    write(tmp_path / "sentences", "a.txt", [prose, other])
    write(tmp_path / "filtered", "a.txt", [prose])            # the second article is lost
    share, seen, examples = long_articles_lost(tmp_path / "formatted", tmp_path / "filtered",
                                               sentences=tmp_path / "sentences")
    assert (share, seen) == (0.5, 2) and examples == [other[0]]
    # the same text copied into a later article is not that article's own: not counted
    write(tmp_path / "formatted", "a.txt", [prose, prose + ["Один свій рядок."]])
    write(tmp_path / "sentences", "a.txt", [prose, prose + ["Один свій рядок."]])
    assert long_articles_lost(tmp_path / "formatted", tmp_path / "filtered",
                              sentences=tmp_path / "sentences")[:2] == (0.0, 1)


def test_measure_corpus_has_every_measure(tmp_path):
    docs = [[f"Речення {i} тут, досить довге для рядка." for i in range(3)]]
    for folder in ("formatted", "sentences", "filtered"):
        write(tmp_path / folder, "a.txt", docs)
    result = measure_corpus(tmp_path)
    assert {m.key for m in MEASURES} == set(result["measures"])
