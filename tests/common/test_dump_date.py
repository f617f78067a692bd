"""common/dump_date.py: one date for one dump, in the model card and in `pipeline export`'s
dataset card alike (issue 60: "dated unknown" beside the model card's date of the same dump)."""
from __future__ import annotations

import json

from common.dump_date import dump_date
from pipeline.core.dataset_card import dump_of
from trainer.export.card import corpus_facts


def test_the_listed_date_then_the_file_name_then_the_newest_revision():
    assert dump_date("ukwiki-20230501-pages-articles.xml.bz2") == "2023-05-01"
    assert dump_date("ukwiki-latest-pages-articles.xml.bz2", "20240601") == "2024-06-01"
    assert dump_date("/d/ukwiki-20230501-pages-articles.xml.bz2", "latest") == "2023-05-01"
    assert dump_date("ukwiki.xml.xz", None, "2023-05-01T12:08:16Z") == "2023-05-01, its newest revision"
    assert dump_date("ukwiki.xml.xz") == dump_date(None, "latest", "") == "unknown"
    assert dump_date("dump_1202305011.xml") == "unknown"   # not a date: digits run on


def test_the_model_card_and_the_dataset_card_say_the_same_date(tmp_path):
    lang = tmp_path / "data" / "uk"
    hdf5 = lang / "hdf5_lower_case_0_seq_len_128_packed"
    (hdf5 / "ukwiki").mkdir(parents=True)
    for name, dump in (("renamed", "/home/me/ukwiki.xml.xz"), ("listed", "/d/ukwiki-20230501-pages-articles.xml.bz2")):
        download = {"summary": {"dump": dump}}
        extract = {"dump": dump, "summary": {"newest_revision": "2023-04-30T23:59:59Z"}}
        for folder, manifest in (("download", download), ("extracted", extract)):
            (lang / folder).mkdir(exist_ok=True)
            (lang / folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        model = corpus_facts(str(hdf5))["dump_date"]
        assert dump_of({"extract": extract, "download": download})[1] == model, name
        assert model == ("2023-04-30, its newest revision" if name == "renamed" else "2023-05-01")
