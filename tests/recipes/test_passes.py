"""`make pretrain`'s passes (recipes/passes.py): a GPU dry run of the shipped sample counts them from
the dump and warns past 4 naming the web corpora and the budget; once the corpus is encoded, from
encode's count; a CPU dry run says the trainer counts them; the closing line from the run's record."""
from __future__ import annotations

import json
from argparse import Namespace

from pipeline.stages.download import download
from recipes.corpus_estimate import estimate_corpus
from recipes.passes import closing_lines, planned_passes, wikipedia_tokens
from tests.helpers.pretrain_cli import pretrain


def passes_of(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("passes: ", "warning: the plan reads"))]


def test_a_gpu_dry_run_of_a_small_dump_warns_and_names_the_web_corpora(sample_dump, tmp_path):
    res = pretrain("--lang", "hu", "--dump", sample_dump, "--dry-run", "--device", "cuda", "--gpu-memory", "80",
                   "--budget", "10m", "--data-dir", tmp_path / "data", "--runs", tmp_path / "runs")
    assert res.returncode == 0, res.stderr
    passes, warning = passes_of(res.stdout)
    text = estimate_corpus(sample_dump, "hu").tokens
    assert passes.startswith("passes: the plan reads, at the bench pace, its training text ")
    assert f"tokens read of a text of {text:,} (estimated: Wikipedia from the dump (recipes/corpus_" in passes
    assert warning.startswith("warning: the plan reads its text ") and "(Muennighoff et al. 2023)" in warning
    assert "Add web text in the language: --corpora fineweb-2 (or hplt-2, madlad-400, culturax)" in warning
    assert not (tmp_path / "data").exists()


def test_a_cpu_dry_run_leaves_the_count_to_the_trainer(sample_dump, tmp_path):
    res = pretrain("--lang", "hu", "--dump", sample_dump, "--dry-run", "--device", "cpu",
                   "--data-dir", tmp_path / "data", "--runs", tmp_path / "runs")
    assert passes_of(res.stdout) == ["passes: counted by the trainer once it has timed its first steps (a CPU's "
                                     "pace is unknown before)"]


def test_once_encoded_the_text_is_encodes_count(tmp_path):
    folder = tmp_path / "hdf5_packed"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"training_text": {
        "rows": 100, "tokens": 10_000, "dupe_factor": 1,
        "sources": {"wikipedia": {"tokens": 4_000, "weight": 1.0}, "web": {"tokens": 6_000, "weight": 3.0}}}}))
    a = Namespace(dump=None, corpora=None, max_tokens=None, data_dir=tmp_path, lang="hu",
                  model_type="bpe")
    passes, how, _parts = planned_passes(a, [50_000.0], [folder], [], tokens_per_step=5_000)
    assert how == "encode's count" and passes.total == 5.0 and passes.steps == 10
    assert passes.by_source() == {"wikipedia": 5.0, "web": 15.0} and passes.text_tokens == 6_000
    assert planned_passes(a, None, [folder], [])[0] is None                      # a CPU: its pace unknown
    assert planned_passes(a, [1.0], [tmp_path / "none"], [])[:2] == (None, "no local dump to estimate the "
                                                                         "text from (--dump)")


def test_the_dump_estimate_is_recipes_corpus_estimate(sample_dump, tmp_path):
    size = estimate_corpus(sample_dump, "hu").tokens
    assert wikipedia_tokens(Namespace(dump=sample_dump, data_dir=tmp_path, lang="hu", model_type="bpe")) == size
    assert wikipedia_tokens(Namespace(dump=None, data_dir=tmp_path, lang="hu", model_type="bpe")) is None
    download(data_dir=tmp_path, lang="hu", dump=sample_dump)     # the dump a finished download holds
    assert wikipedia_tokens(Namespace(dump=None, data_dir=tmp_path, lang="hu", model_type="bpe")) == size


def test_the_closing_line_says_what_the_run_read(tmp_path):
    (tmp_path / "hparams.json").write_text(json.dumps({"passes": 37.2, "passes_most": 37.2}))
    records = [{"step": 5, "loss": 6.0}, {"step": 10, "loss": 5.0, "passes_read": 6.5, "passes_read_most": 13.0,
                                          "passes_read_by_source": {"wikipedia": {"passes": 6.5, "weight": 1.0},
                                                                    "web": {"passes": 13.0, "weight": 2.0}}},
               {"step": 10, "eval_loss": 5.1}]
    (tmp_path / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert closing_lines(tmp_path) == ["   passes: the run read its text 6.5 times; wikipedia 6.5, web 13.0 "
                                       "(weight 2): past about 4, repeated text teaches little"]
    (tmp_path / "train_log.jsonl").write_text(json.dumps(records[0]) + "\n")   # stopped before its end
    assert closing_lines(tmp_path) == ["   passes: the run planned to read its text 37.2 times: past about 4, "
                                       "repeated text teaches little"]
    assert closing_lines(tmp_path / "nothing") == []
