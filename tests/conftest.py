"""Fixtures shared by the whole suite. Tests run on the project's own fixtures; the real
dumps in ../shared/data are used only where present (`shared_data` skips otherwise)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.helpers.vocab_corpus import RARE_WORD, make_sentences, write_corpus

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DUMP = ROOT / "data" / "sample" / "huwiki-sample.xml.bz2"
SHARED_DATA = ROOT.parent / "shared" / "data"

# One OpenMP thread per test process and every process it starts (set before torch is
# imported; a value the user set is kept). The suite's models are tiny: more threads do not
# make their ops faster, but with two pytest workers, torchrun ranks and other jobs on the same
# cores, idle OpenMP threads spin against each other (measured: tests/trainer/schedule/test_optim.py and
# tests/trainer/models/test_varlen.py 41 s -> 13 s). tests/trainer/conftest.py's one_thread
# fixture still sets it where a test module says so.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# No test reads or writes a user's caches: Hugging Face datasets and hub (an earlier
# `load_dataset` of the user's decided what a test saw), transformers, torch hub and extensions,
# matplotlib, our language-id cache. Every cache folder points into one temporary folder for the
# whole run, made by the first process (pytest, or xdist's controller) and inherited by the
# workers and every process a test starts; a user's own settings are overridden, never used.
# Nothing is downloaded in tests, so the hubs are offline. A torch-extensions or transformers
# cache folder the user set is dropped: the DeepSpeed test then builds into its virtualenv's own (TORCH_EXTENSIONS_DIR
# left unset, as tests/trainer/test_training_deepspeed.py expects).
TEST_CACHE_ENV = "WIKI2BERT_TEST_CACHE"
_inherited = os.environ.get(TEST_CACHE_ENV, "")
if not (_inherited.startswith(tempfile.gettempdir()) and Path(_inherited).is_dir()):
    os.environ[TEST_CACHE_ENV] = tempfile.mkdtemp(prefix="wiki2bert-test-cache-")
    os.environ["WIKI2BERT_TEST_CACHE_OWNER"] = str(os.getpid())
TEST_CACHE = Path(os.environ[TEST_CACHE_ENV])
CACHE_FOLDERS = {"XDG_CACHE_HOME": "xdg", "HF_HOME": "huggingface",
                 "HF_DATASETS_CACHE": "huggingface/datasets", "HF_HUB_CACHE": "huggingface/hub",
                 "TORCH_HOME": "torch",
                 "MPLCONFIGDIR": "matplotlib"}
for _var, _sub in CACHE_FOLDERS.items():
    os.environ[_var] = str(TEST_CACHE / _sub)
os.environ.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
for _var in ("TORCH_EXTENSIONS_DIR", "TRANSFORMERS_CACHE"):
    os.environ.pop(_var, None)      # a user's own (TRANSFORMERS_CACHE would win over HF_HOME)


def pytest_unconfigure(config):
    """The process that made the temporary cache folder removes it at the end of the run."""
    if os.environ.get("WIKI2BERT_TEST_CACHE_OWNER") == str(os.getpid()):
        shutil.rmtree(TEST_CACHE, ignore_errors=True)


@pytest.fixture(scope="session")
def sample_dump() -> Path:
    """The small Hungarian MediaWiki dump the project ships."""
    assert SAMPLE_DUMP.is_file(), f"{SAMPLE_DUMP} missing"
    return SAMPLE_DUMP


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data with the real (truncated) ukwiki and viwiki dumps; skipped where absent."""
    if not (SHARED_DATA / "ukwiki.xml.xz").is_file():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


# A synthetic Hungarian corpus as the filter stage writes it, and a vocab built from it once
# (tests/pipeline/stages/test_vocab.py, tests/vocab/).


@pytest.fixture(scope="session")
def hu_sentences() -> list[str]:
    return make_sentences(3000) + [f"{RARE_WORD} itt volt.", "ÁRVÍZTŰRŐ TÜKÖRFÚRÓGÉP!"]


@pytest.fixture(scope="session")
def hu_data(tmp_path_factory, hu_sentences) -> Path:
    """DATA_DIR with hu/filtered holding the synthetic corpus."""
    data = tmp_path_factory.mktemp("data")
    write_corpus(data / "hu" / "filtered", hu_sentences)
    return data


@pytest.fixture(scope="session")
def hu_vocab(hu_data) -> Path:
    """A vocab trained once by the stage (cased, BPE, 600 entries); shared by read-only tests."""
    from pipeline.stages.vocab import build_vocab

    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=600)
    return hu_data / "hu" / "vocab"


@pytest.fixture(scope="session")
def corpus():
    """The corpus helpers for tests that build their own data: corpus.make_sentences(n, seed),
    corpus.write_corpus(folder, sentences, ...), corpus.RARE_WORD."""
    from tests.helpers import vocab_corpus

    return vocab_corpus
