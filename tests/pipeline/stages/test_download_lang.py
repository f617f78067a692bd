"""download's check of --lang: against the local dump's <siteinfo> (its dbname) and against the
list of Wikipedias (pipeline/text/wikipedias.txt); --allow-unknown-lang (also on `run`) skips it."""
from __future__ import annotations

import json
import socket

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages.download import download, dump_name
from pipeline.text.dump import dump_siteinfo
from pipeline.text.wikipedias import code_of_dbname, is_wikipedia, wiki_dbname
from tests.helpers.wiki_dump import write_bz2_dump

PAGES = [("Երևան", "Երևանը Հայաստանի մայրաքաղաքն է։")]


def invoke(data, lang, *args):
    return CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", lang, *args])


@pytest.fixture
def hy_dump(tmp_path):
    path = tmp_path / "hy.xml.bz2"
    write_bz2_dump(path, "hy", PAGES)
    return path


def test_the_list_has_every_wikipedia_and_its_dump_names():
    for code in ("hu", "en", "simple", "zh-min-nan", "zh-yue", "zh_yue", "be-x-old", "be-tarask",
                 "zh-classical", "nds-nl", "roa-rup", "als", "sh", "ceb", "hy", "hyw", "aa"):
        assert is_wikipedia(code), code
    for code in ("xx", "english", "hun", "zz", "en-us"):
        assert not is_wikipedia(code), code
    assert wiki_dbname("zh-min-nan") == "zh_min_nanwiki" and wiki_dbname("zh_yue") == "zh_yuewiki"
    assert wiki_dbname("be-tarask") == wiki_dbname("be-x-old") == "be_x_oldwiki"
    assert dump_name("be-tarask", "20240501").startswith("be_x_oldwiki-20240501-")
    assert code_of_dbname("be_x_oldwiki") == "be-tarask" and code_of_dbname("hywiki") == "hy"
    assert code_of_dbname("huwikivoyage") == ""


def test_the_shipped_sample_is_huwiki(sample_dump):
    assert dump_siteinfo(sample_dump).dbname == "huwiki"


def test_a_code_that_is_not_the_dumps_wiki_is_one_line_naming_the_right_one(hy_dump, tmp_path):
    res = invoke(tmp_path / "d", "xx", "download", "--dump", str(hy_dump))
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert "hywiki" in res.output and "use --lang hy" in res.output and "make corpus LANG=hy" in res.output
    # issue 38: never --allow-unknown-lang, which would write an Armenian corpus labelled xx
    assert "--allow-unknown-lang" not in res.output
    assert not (tmp_path / "d").exists()   # nothing written under xx/
    # a real code of another wiki is refused the same way
    res = invoke(tmp_path / "d", "hu", "download", "--dump", str(hy_dump))
    assert res.exit_code == 1 and "use --lang hy" in res.output
    assert invoke(tmp_path / "d", "hy", "download", "--dump", str(hy_dump)).exit_code == 0


def test_allow_unknown_lang_takes_the_code_as_it_is(hy_dump, tmp_path):
    res = invoke(tmp_path / "d", "xx", "download", "--dump", str(hy_dump), "--allow-unknown-lang")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "d" / "xx" / "download" / "manifest.json").is_file()
    summary = download(data_dir=tmp_path / "e", lang="xx", dump=hy_dump, allow_unknown_lang=True)
    assert summary["dump"] == str(hy_dump.resolve())


def test_run_passes_allow_unknown_lang_to_download(sample_dump, tmp_path):
    res = invoke(tmp_path / "d", "xx", "--workers", "1", "run", "--dump", str(sample_dump), "--no-encode")
    assert res.exit_code == 1 and "use --lang hu" in res.output
    assert not (tmp_path / "d").exists()
    res = invoke(tmp_path / "d", "xx", "--workers", "1", "run", "--dump", str(sample_dump), "--no-encode",
                 "--vocab-size", "600", "--allow-unknown-lang")
    manifest = json.loads((tmp_path / "d" / "xx" / "download" / "manifest.json").read_text())
    assert manifest["dump"] == str(sample_dump.resolve())
    assert res.exit_code == 0, res.output


def test_a_dump_that_names_no_wiki_is_checked_against_the_list(tmp_path):
    dump = tmp_path / "old.xml.bz2"
    write_bz2_dump(dump, "hy", PAGES, dbname="")
    res = invoke(tmp_path / "d", "xx", "download", "--dump", str(dump))
    assert res.exit_code == 1 and "not the code of a Wikipedia" in res.output
    assert "--allow-unknown-lang" in res.output and len(res.output.strip().splitlines()) == 1
    assert invoke(tmp_path / "d", "hy", "download", "--dump", str(dump)).exit_code == 0


@pytest.mark.parametrize("lang", ["zh-yue", "zh_yue"])
def test_dbname_forms_and_a_wiki_newer_than_the_list(tmp_path, lang):
    dump = tmp_path / "yue.xml.bz2"
    write_bz2_dump(dump, "zh-yue", [("香港", "香港係一個城市。")])   # <dbname>zh_yuewiki
    download(data_dir=tmp_path / "d", lang=lang, dump=dump)
    new = tmp_path / "new.xml.bz2"
    write_bz2_dump(new, "qqq", PAGES)   # the dump itself says it is qqqwiki: its word counts
    download(data_dir=tmp_path / "e", lang="qqq", dump=new)
    res = invoke(tmp_path / "f", "hy", "download", "--dump", str(new))   # the dump's code, off the list
    assert res.exit_code == 1 and "use --lang qqq" in res.output and "--allow-unknown" not in res.output


def test_an_unknown_code_is_refused_before_any_download(tmp_path):
    with socket.socket() as s:  # a port nobody listens on: the check must come first
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = invoke(tmp_path, "xx", "download", "--base-url", f"http://127.0.0.1:{port}")
    assert res.exit_code == 1 and "not the code of a Wikipedia" in res.output
    assert "cannot reach" not in res.output
    with pytest.raises(StageError, match="cannot reach"):
        download(data_dir=tmp_path, lang="xx", base_url=f"http://127.0.0.1:{port}", allow_unknown_lang=True)
