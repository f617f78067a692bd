"""A language's part of a corpus as files, provenance, licence and size, from a local copy laid
out as the Hub repository (--corpus-root): what `make pretrain` asks before anything runs."""
from __future__ import annotations

import pytest

from pipeline.core.errors import StageError
from pipeline.corpora.locate import locate, locate_url
from tests.helpers.hub_corpus import fineweb2_repo

DOCS = [[f"A(z) {i}. dokumentum szövege, néhány szóval."] for i in range(30)]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return fineweb2_repo(tmp_path_factory.mktemp("fw2") / "fineweb-2", {"hun_Latn": DOCS, "fin_Latn": DOCS[:5]})


def test_the_part_its_provenance_and_its_size(repo):
    part = locate("hu", "fineweb-2", corpus_root=repo)
    assert [f.path for f in part.files] == [f"data/hun_Latn/train/000_{k:05d}.parquet" for k in range(3)]
    sizes = [(repo / f.path).stat().st_size for f in part.files]
    assert part.bytes == sum(sizes) and part.slice_bytes(max_bytes=sizes[0] + 1) == sizes[0]
    assert part.estimated_tokens() == int(sum(sizes) * 0.3) and part.estimated_tokens(max_tokens=10) == 10
    assert part.expected_bytes() == sum(sizes) and part.expected_bytes(max_tokens=30) == 100   # 30 / 0.3
    record = part.provenance()
    assert (record["repo"], record["from"], record["language"], record["license"]) == (
        "HuggingFaceFW/fineweb-2", "mirror", "hun_Latn", ["odc-by"])
    assert locate("fi", "fineweb-2", corpus_root=repo).files[0].path == "data/fin_Latn/train/000_00000.parquet"
    assert locate("hu", "fineweb-2:fin_Latn", corpus_root=repo).language == "fin_Latn"


def test_a_url_source_and_its_cards_licence(repo):
    part = locate_url("web", "hf://datasets/HuggingFaceFW/fineweb-2/data/*/train/*.parquet", corpus_root=repo)
    assert len(part.files) == 8 and part.fmt == "parquet"   # 3 + 3 + the two _removed/train
    assert part.license == ("odc-by",)                      # read from its README.md card
    with pytest.raises(StageError, match="no file of HuggingFaceFW/fineweb-2 .mirror. matches data/x/"):
        locate_url("web", "hf://datasets/HuggingFaceFW/fineweb-2/data/x/*.parquet", corpus_root=repo)


def test_a_corpus_without_the_language_names_its_nearest(repo):
    with pytest.raises(StageError, match=r"FineWeb-2 has no part for --lang et \(et\); its nearest languages: "
                                         r"fin_Latn, hun_Latn: name one with --corpus fineweb-2:CODE"):
        locate("et", "fineweb-2", corpus_root=repo)
