"""`pipeline run` end to end on small dumps in other scripts: Japanese and Chinese (no spaces), Hindi
(danda), Arabic (؟), Armenian (։, unknown to langdetect) and Thai (no sentence punctuation).
Nothing here is tuned to these texts: the point is that every stage works for any wiki."""
from __future__ import annotations

import json
import random

import h5py
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from tests.helpers.wiki_dump import write_bz2_dump
from vocab.core.bert_tokenizer import make_tokenizer
from vocab.kinds import load_vocab

SENTENCES = {
    "ja": ["東京は日本の首都であり、世界有数の大都市である。", "人口は約千四百万人で、多くの企業の本社が置かれている。",
           "江戸時代には幕府が置かれ、政治の中心地として栄えた。", "明治維新の後、東京と改称された。",
           "現在では交通網が発達しており、鉄道や地下鉄が市内を結んでいる。"],
    "hi": ["दिल्ली भारत की राजधानी है और यह एक बहुत बड़ा शहर है।", "यहाँ की जनसंख्या करोड़ों में है और यह व्यापार का केंद्र है।",
           "मुगल काल में यह शहर सत्ता का प्रमुख केंद्र था।", "आज यहाँ अनेक विश्वविद्यालय और संग्रहालय स्थित हैं।",
           "शहर में मेट्रो रेल की सुविधा उपलब्ध है।"],
    "ar": ["القاهرة هي عاصمة مصر وأكبر مدنها من حيث عدد السكان.", "تقع المدينة على ضفاف نهر النيل في شمال البلاد.",
           "تأسست المدينة في العصر الفاطمي وازدهرت عبر القرون.", "هل تعلم أن المدينة تضم العديد من المساجد التاريخية؟",
           "يزور المدينة ملايين السياح كل عام لمشاهدة الأهرامات القريبة."],
    "hy": ["Երևանը Հայաստանի մայրաքաղաքն է և ամենամեծ քաղաքը։", "Քաղաքը գտնվում է Հրազդան գետի ափին։",
           "Քաղաքում կան բազմաթիվ թանգարաններ և թատրոններ։", "Ամեն տարի քաղաք են այցելում հազարավոր զբոսաշրջիկներ։",
           "Քաղաքի կենտրոնում է գտնվում Հանրապետության հրապարակը։"],
    "zh": ["北京是中华人民共和国的首都，也是全国的政治中心。", "这座城市有三千多年的建城史。",
           "故宫位于城市的中心，是世界上最大的宫殿建筑群之一。", "你去过长城吗？",
           "每年都有数百万游客来这里参观名胜古迹。"],
    "th": ["กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย", "เมืองนี้ตั้งอยู่ริมแม่น้ำเจ้าพระยา",
           "มีประชากรหลายล้านคนอาศัยอยู่ในเมือง", "มีวัดและพระราชวังที่สวยงามมากมาย",
           "นักท่องเที่ยวจำนวนมากเดินทางมาเยือนทุกปี"],
}
JOINER = {"ja": "", "zh": "", "th": " "}


def numbered(sentence: str, rng: random.Random) -> str:
    """The sentence with a year in it, so that a corpus of a few templates has distinct sentences;
    the year is a link (as on a real wiki: the probe stage is made of links)."""
    words = sentence.split(" ")
    at = rng.randrange(len(words))
    return " ".join(words[:at] + [f"[[{rng.randint(1000, 9999)}]]"] + words[at:])


def write_dump(path, lang: str, n_pages: int = 30) -> None:
    rng = random.Random(lang)
    sents = SENTENCES[lang]
    pages = []
    for i in range(n_pages):
        paras = [JOINER.get(lang, " ").join(numbered(rng.choice(sents), rng) for _ in range(4))
                 for _ in range(5)]
        body = ("{{Infobox city|name=X}}\n" + "\n\n".join(paras[:4]) + "\n\n== H ==\n" + paras[4]
                + "<ref>source</ref>\n[[Category:X]]")
        pages.append((f"P{i}", body))
    write_bz2_dump(path, lang, pages)


@pytest.mark.parametrize("lang", sorted(SENTENCES))
def test_every_stage_works_for_another_script(tmp_path, lang):
    dump = tmp_path / f"{lang}wiki.xml.bz2"
    write_dump(dump, lang)
    data = tmp_path / "data"
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", lang, "--workers", "1", "run",
                                   "--dump", str(dump), "--vocab-size", "300", "--encode", "128/20",
                                   "--dupe-factor", "1"])
    assert res.exit_code == 0, res.output
    root = data / lang

    summary = json.loads((root / "filtered" / "manifest.json").read_text())["summary"]
    assert summary["kept"] == summary["documents"] == 30, summary

    sentences = [line for p in sorted((root / "sentences").glob("*.txt"))
                 for line in p.read_text(encoding="utf-8").splitlines() if line]
    assert not any("\ufffd" in s for s in sentences)
    # Every sentence of the source comes out whole: no split inside one, no two glued together
    # (Thai has no sentence punctuation, so its paragraphs stay whole).
    if lang != "th":
        ends = tuple(s[-1] for s in SENTENCES[lang])
        assert len(sentences) == 30 * 5 * 4, len(sentences)  # 5 paragraphs of 4 sentences
        assert all(s.endswith(ends) for s in sentences)

    spec = load_vocab(root / "vocab")
    tok = make_tokenizer(spec)
    ids = [i for s in sentences for i in tok.encode(s, add_special_tokens=False).ids]
    assert ids and spec.unk_id not in ids

    # the probe: each token of a sentence as written, the linked year's token tagged
    probe = (root / "probe" / "train.conll").read_text(encoding="utf-8")
    assert probe.endswith("\n\n") and "B-LINK" in probe

    files = sorted(root.glob("hdf5_*_seq_len_128_*/*/*_training_*.hdf5"))
    assert files
    with h5py.File(files[0]) as f:
        assert f["input_ids"].shape[1] == 128 and f["input_ids"].shape[0] > 0
