"""`make pretrain CORPORA=fineweb-2` end to end (python -m recipes.pretrain --corpora fineweb-2=2
--corpus-root COPY): the shipped sample and a local copy in FineWeb-2's layout and columns with
copies of the sample's articles planted in it, through ingest and dedup (the planted copies gone,
Wikipedia's kept), shard with the weight (held-out documents of both sources), a CPU run of 15 s,
the report's funnel per source, and the passes in the plan, the log, the card and the closing lines."""
from __future__ import annotations

import json

import pytest

from pipeline.text.documents import documents, read_utf8
from tests.helpers.hub_corpus import fineweb2_repo
from tests.helpers.pretrain_cli import pretrain
from tests.helpers.web_corpus import planted_corpus, sample_documents


@pytest.mark.slow
def test_wikipedia_and_fineweb2_to_a_model_that_counts_its_passes(sample_dump, tmp_path):
    docs = sample_documents(tmp_path / "sample", sample_dump)
    planted = planted_corpus(docs, seed=0, new=200)          # 6 exact and 6 near copies, 200 new
    copy = fineweb2_repo(tmp_path / "fineweb-2", {"hun_Latn": [d for _k, d in planted]})
    data, runs = tmp_path / "data", tmp_path / "runs"
    res = pretrain("--lang", "hu", "--dump", sample_dump, "--budget", "15s", "--device", "cpu", "--workers", "1",
                   "--probe", "off", "--data-dir", data, "--runs", runs, "--corpora", "fineweb-2=2",
                   "--corpus-root", copy)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    out = res.stdout
    steps = [line.split(" --workers 1 ")[1] for line in out.splitlines() if line.startswith("$ python -m pipeline")]
    assert steps[2:6] == ["format", f"ingest --corpus fineweb-2 --corpus-root {copy}", "dedup", "split"]
    assert "shard --weight fineweb-2=2" in steps
    hu = data / "hu"
    # dedup: every planted copy removed, Wikipedia's articles kept whole
    per = json.loads((hu / "deduped/manifest.json").read_text())["summary"]["per_source"]
    assert (per["fineweb-2"]["exact"], per["fineweb-2"]["near"]) == (6, 6)
    assert per["wikipedia"]["kept"] == per["wikipedia"]["documents"] == len(docs)
    web = {"\n".join(d) for p in (hu / "deduped").glob("fineweb-2__*.txt") for d in documents(read_utf8(p))}
    assert not web & {"\n".join(d) for k, d in planted if k == "exact"}
    # shard: each source holds out documents; the web's training documents twice
    sources = json.loads((hu / "sharded/manifest.json").read_text())["summary"]["sources"]
    assert sources["fineweb-2"]["test_documents"] >= 1 and sources["wikipedia"]["test_documents"] >= 1
    assert sources["fineweb-2"]["weight"] == 2.0
    # the report's funnel per source
    page = (hu / "report.html").read_text(encoding="utf-8")
    funnel = page.split('<section id="sources">')[1].split("</section>")[0]
    assert "fineweb-2" in funnel and "after split and filter" in funnel
    # the passes: planned in hparams.json and the log, read in the last record, on the card, in the closing lines
    run = runs / "hu_modern"
    hp = json.loads((run / "hparams.json").read_text())
    assert hp["passes"] > 0 and hp["passes_by_source"]["fineweb-2"]["weight"] == 2.0
    assert hp["passes_by_source"]["fineweb-2"]["passes"] == pytest.approx(2 * hp["passes"], rel=1e-3)
    assert "passes: the plan reads its training text" in res.stderr + out
    read = [r for r in map(json.loads, (run / "train_log.jsonl").read_text().splitlines()) if "passes_read" in r]
    assert len(read) == 1 and read[0]["passes_read"] > 0 and read[0]["passes_read_by_source"]["fineweb-2"]
    card = (run / "hf" / "README.md").read_text(encoding="utf-8")
    row = next(line for line in card.splitlines() if line.startswith("| passes over the text |"))
    assert "read by the end of the run" in row and "fineweb-2" in row and "(weight 2)" in row
    assert "FineWeb-2 (HuggingFaceFW/fineweb-2" in card   # its terms beside Wikipedia's
    closing = out.strip().splitlines()
    assert any(line.startswith("   passes: the run read its text ") and "fineweb-2" in line for line in closing[-6:])
    assert "teaches little" not in out   # a CPU run: the count only, no warning
