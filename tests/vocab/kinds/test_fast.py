"""load_tokenizer on each tokenizer.json kind (`fast` for a WordPiece tokenizer.json,
`bytelevel-bpe`, `unigram` as XLM-R's): its ids are AutoTokenizer's, `continues_word`, a stable
fingerprint that tells two tokenizers apart, `save` round trips through AutoTokenizer; the
vocab.txt kind's same surface; one clear VocabError for what is no tokenizer. Tokenizers are
built here, offline."""
from __future__ import annotations

import json
import pickle
import shutil

import pytest

from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_vocab
from tests.helpers.hf_tokenizers import BUILDERS, bytelevel_bpe_tokenizer
from vocab.core.layout import VocabError
from vocab.kinds import load_tokenizer
from vocab.kinds.fast import TokenizerSpec
from vocab.kinds.wordpiece import VocabSpec

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def texts():
    return [s for d in make_documents(150, seed=11) for s in d]


@pytest.fixture(scope="module")
def heldout():
    return [s for d in make_documents(20, seed=99) for s in d] + ["Київ, «місто» — (1999)!", "naïve café's"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory, texts):
    root = tmp_path_factory.mktemp("tok")
    return {kind: build(root / kind, texts) for kind, build in BUILDERS.items()}


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_ids_and_specials_are_autotokenizers(folders, heldout, kind):
    spec = load_tokenizer(folders[kind])
    auto = transformers.AutoTokenizer.from_pretrained(folders[kind])
    assert isinstance(spec, TokenizerSpec) and spec.piece_model == kind
    assert spec.kind == {"wordpiece": "fast", "bpe": "bytelevel-bpe", "unigram": "unigram"}[kind]
    assert spec.size == len(auto)
    assert list(spec.tokens) == auto.convert_ids_to_tokens(list(range(spec.size)))
    assert (spec.pad_id, spec.cls_id, spec.sep_id, spec.mask_id) == \
        (auto.pad_token_id, auto.cls_token_id, auto.sep_token_id, auto.mask_token_id)
    assert spec.unk_id == (None if kind == "bpe" else auto.unk_token_id)   # byte-level: no unknown
    if kind != "wordpiece":
        assert spec.pad_id == 1 and spec.pair_type_id == 0      # RoBERTa's / XLM-R's layout
    for t in auto.all_special_tokens:
        assert spec.is_special(t), t
    spec.check_usable()
    # the pipeline's encoder and word_ids give AutoTokenizer's ids
    enc = spec.encoder()
    ids, counts, starts = enc.encode_words("\n".join(heldout))
    want = [auto(s, add_special_tokens=False)["input_ids"] for s in heldout]
    assert counts.tolist() == [len(w) for w in want]
    assert ids.tolist() == [i for w in want for i in w]
    words = auto(heldout, add_special_tokens=False)
    want_starts = [w != p for b in range(len(heldout)) for w, p in
                   zip(words.word_ids(b), [None, *words.word_ids(b)])]
    assert starts.tolist() == want_starts
    assert spec.word_ids(["város", "Київ"]) == [auto(w, add_special_tokens=False)["input_ids"]
                                                for w in ("város", "Київ")]


def test_continues_word_per_kind(folders):
    wp, bpe, uni = (load_tokenizer(folders[k]) for k in ("wordpiece", "bpe", "unigram"))
    assert wp.continues_word("##ás") and not wp.continues_word("alma") and not wp.continues_word("[CLS]")
    assert bpe.continues_word("ás") and not bpe.continues_word("\u0120alma") and not bpe.continues_word("<s>")
    assert uni.continues_word("ás") and not uni.continues_word("\u2581alma") and not uni.continues_word("<mask>")
    for spec in (wp, bpe, uni):   # every piece of a word after its first continues it
        ids = spec.backend().encode("árvíztűrő", add_special_tokens=False).ids
        flags = [spec.continues_word(spec.tokens[i]) for i in ids]
        assert flags == [False] + [True] * (len(ids) - 1), (spec.piece_model, [spec.tokens[i] for i in ids])


def test_fingerprint_is_stable_and_tells_tokenizers_apart(folders, tmp_path):
    a = load_tokenizer(folders["bpe"])
    assert a.fingerprint == load_tokenizer(folders["bpe"]).fingerprint
    # what decides the ids, not how the file spells it: re-saved by transformers, the same
    resaved = tmp_path / "resaved"
    transformers.AutoTokenizer.from_pretrained(folders["wordpiece"]).save_pretrained(resaved)
    assert load_tokenizer(resaved).fingerprint == load_tokenizer(folders["wordpiece"]).fingerprint
    assert len({load_tokenizer(f).fingerprint for f in folders.values()}) == 3
    copy = tmp_path / "copy"
    shutil.copytree(folders["bpe"], copy)      # where it lies does not matter, what it holds does
    assert load_tokenizer(copy).fingerprint == a.fingerprint
    # pickled to worker processes: the same spec, its tokenizer rebuilt there
    b = pickle.loads(pickle.dumps(a))
    assert b.tokens == a.tokens and b.fingerprint == a.fingerprint and b.pad_id == a.pad_id
    assert b.backend().encode("város").ids == a.backend().encode("város").ids


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_save_round_trips_through_autotokenizer(folders, heldout, tmp_path, kind):
    spec = load_tokenizer(folders[kind])
    spec.save(tmp_path / "model", model_max_length=128)
    auto = transformers.AutoTokenizer.from_pretrained(tmp_path / "model")
    orig = transformers.AutoTokenizer.from_pretrained(folders[kind])
    assert auto.model_max_length == 128
    assert auto(heldout)["input_ids"] == orig(heldout)["input_ids"]
    assert auto(heldout[0], heldout[1])["input_ids"] == orig(heldout[0], heldout[1])["input_ids"]
    assert load_tokenizer(tmp_path / "model").fingerprint == spec.fingerprint


def test_vocab_spec_has_the_same_surface(tmp_path, heldout):
    text = documents_text(make_documents(60, seed=3))
    cased = write_vocab(tmp_path / "cased", vocab_tokens(text), lower_case=False)
    lower = write_vocab(tmp_path / "lower", vocab_tokens(text), lower_case=True)
    spec = load_tokenizer(cased)
    assert isinstance(spec, VocabSpec) and spec.kind == "wordpiece" and spec.folder == cased
    assert spec.continues_word("##a") and not spec.continues_word("a") and spec.pair_type_id == 1
    assert spec.fingerprint == load_tokenizer(cased / "vocab.txt").fingerprint
    # the same vocab.txt with another case setting gives other ids: another fingerprint
    (lower / "vocab.txt").write_bytes((cased / "vocab.txt").read_bytes())
    assert load_tokenizer(lower).fingerprint != spec.fingerprint
    spec.save(tmp_path / "model", model_max_length=256, tokenizer_json=True)
    assert {p.name for p in (tmp_path / "model").iterdir()} == {"vocab.txt", "tokenizer_config.json",
                                                                "tokenizer.json"}
    auto = transformers.AutoTokenizer.from_pretrained(tmp_path / "model")
    bert = transformers.BertTokenizerFast.from_pretrained(cased)
    assert auto(heldout)["input_ids"] == bert(heldout)["input_ids"]
    assert auto(heldout[0], heldout[1])["token_type_ids"] == bert(heldout[0], heldout[1])["token_type_ids"]
    # its tokenizer.json alone is a WordPiece TokenizerSpec with the same ids
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(tmp_path / "model" / "tokenizer.json", alone)
    tspec = load_tokenizer(alone)
    assert isinstance(tspec, TokenizerSpec) and tspec.tokens == spec.tokens
    assert tspec.fingerprint == spec.fingerprint   # the same ids: a vocab.txt or its tokenizer.json
    assert (tspec.pad_id, tspec.unk_id, tspec.cls_id, tspec.sep_id, tspec.mask_id) == \
        (spec.pad_id, spec.unk_id, spec.cls_id, spec.sep_id, spec.mask_id)
    assert tspec.word_ids(["Київ", "árvíztűrő"]) == spec.word_ids(["Київ", "árvíztűrő"])


def test_slow_tokenizer_files_are_converted(folders, heldout, tmp_path):
    # RoBERTa's slow files (vocab.json + merges.txt, no tokenizer.json): transformers converts them
    tj = json.loads((folders["bpe"] / "tokenizer.json").read_text(encoding="utf-8"))
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "vocab.json").write_text(json.dumps(tj["model"]["vocab"]), encoding="utf-8")
    (slow / "merges.txt").write_text("#version: 0.2\n" + "\n".join(" ".join(m) for m in tj["model"]["merges"])
                                     + "\n", encoding="utf-8")
    cfg = json.loads((folders["bpe"] / "tokenizer_config.json").read_text(encoding="utf-8"))
    (slow / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    spec = load_tokenizer(slow)
    assert isinstance(spec, TokenizerSpec) and spec.tokenizer_file is None and spec.piece_model == "bpe"
    auto = transformers.AutoTokenizer.from_pretrained(slow)
    ids, _, _ = spec.encoder().encode_words("\n".join(heldout))
    assert ids.tolist() == [i for s in heldout for i in auto(s, add_special_tokens=False)["input_ids"]]


def test_what_is_no_tokenizer_is_one_clear_error(tmp_path, texts):
    with pytest.raises(VocabError, match="does not exist"):
        load_tokenizer(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README.md").write_text("a model card\n")
    with pytest.raises(VocabError, match="holds no tokenizer"):
        load_tokenizer(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "tokenizer.json").write_text("{not json")
    with pytest.raises(VocabError, match="not a tokenizers tokenizer.json"):
        load_tokenizer(tmp_path / "bad")
    nomask = load_tokenizer(bytelevel_bpe_tokenizer(tmp_path / "nomask", texts[:200], mask=False))
    with pytest.raises(VocabError, match="no mask token") as err:
        nomask.check_usable()
    assert "\n" not in str(err.value) and "mask_token" in str(err.value)
    with pytest.raises(VocabError, match="no mask token"):
        _ = nomask.mask_id
