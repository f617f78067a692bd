"""The table of named corpora: each entry's language folders (FineWeb-2's _removed and test
folders never read), its files, and a misspelled name as one line."""
from __future__ import annotations

import pytest

from pipeline.core.errors import StageError
from pipeline.corpora.named import CORPORA, named_corpus


def test_fineweb2_reads_its_languages_training_files_only():
    fw = named_corpus("FineWeb-2")
    assert fw.language_of("data/hun_Latn") == "hun_Latn"
    assert fw.language_of("data/hun_Latn_removed") == fw.language_of("hun_Latn") == ""
    assert fw.files_of("hun_Latn") == ["data/hun_Latn/train/*.parquet"]
    assert (fw.repo, fw.license, fw.score_column) == ("HuggingFaceFW/fineweb-2", ("odc-by",), "language_score")


def test_the_other_layouts():
    assert CORPORA["hplt-2"].language_of("eng_Latn_12") == "eng_Latn"    # a language over numbered folders
    assert CORPORA["madlad-400"].language_of("data/sr_Latn") == "sr_Latn"
    assert CORPORA["madlad-400"].files_of("hu") == ["data/hu/*_clean_*.jsonl.gz"]
    assert CORPORA["culturax"].gated and CORPORA["culturax"].language_of("hu") == "hu"


def test_a_misspelled_corpus_is_one_line():
    with pytest.raises(StageError, match="not a named corpus .did you mean fineweb-2.*hf://datasets"):
        named_corpus("finweb-2")
