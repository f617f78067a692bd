"""The vocab folder loads in Hugging Face transformers 5.x with its case setting."""
import pytest

from pipeline.stages.vocab import build_vocab
from vocab.core.bert_tokenizer import make_tokenizer
from vocab.kinds import load_vocab

transformers = pytest.importorskip("transformers")

HU = "Árvíztűrő tükörfúrógép, ÁRVÍZTŰRŐ TÜKÖRFÚRÓGÉP, Éva és Ödön az Őrségben, Úrkút, Ürmös, Ízisz, Ócsa, madár."
ACCENTED = "áéíóöőúüűÁÉÍÓÖŐÚÜŰ"


def _join(tokens):
    """Pieces joined back into words (## glued to the previous piece)."""
    out = []
    for t in tokens:
        if t.startswith("##") and out:
            out[-1] += t[2:]
        else:
            out.append(t)
    return out


def test_from_pretrained_gives_real_tokens_and_the_accents_back(hu_vocab):
    tok = transformers.BertTokenizerFast.from_pretrained(str(hu_vocab))
    assert len(tok) == 600  # the whole vocab, not a 5-token stub
    tokens = tok.tokenize(HU)
    assert "[UNK]" not in tokens
    words = [w for w in _join(tokens) if w.isalpha()]
    assert " ".join(words) == " ".join(w.strip(",.:") for w in HU.split() if w.strip(",.:"))
    assert set(ACCENTED) <= set("".join(words))
    # the same ids as the tokenizer encode uses
    ours = make_tokenizer(load_vocab(hu_vocab)).encode(HU, add_special_tokens=False)
    assert tok(HU, add_special_tokens=False)["input_ids"] == ours.ids
    enc = tok("Éva", "Ödön")["input_ids"]
    assert enc[0] == tok.cls_token_id == 101 and enc[-1] == tok.sep_token_id == 102


@pytest.mark.parametrize("strip", [False, True])
def test_lower_case_setting_is_honoured(hu_data, tmp_path, strip):
    out = tmp_path / "v"
    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=500, output=out,
                lower_case=True, strip_accents=strip)
    tok = transformers.BertTokenizerFast.from_pretrained(str(out))
    tokens = tok.tokenize(HU)
    assert "[UNK]" not in tokens
    text = "".join(_join(tokens))
    if strip:
        assert not set(ACCENTED) & set(text) and "arvizturo" in text
    else:
        assert set(ACCENTED.lower()) <= set(text) and "árvíztűrő" in text
    assert not set(ACCENTED.upper()) & set(text)
