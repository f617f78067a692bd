"""Section `joint-vocab` (only where this language shares a joint vocab): per language of the
joint vocab, its share of the text and of the vocab's sample, and pieces per word, words kept
whole and [UNK] words with the joint vocab against its own vocab: the price of sharing.

Reads joint_report.json of every finished `pipeline joint-vocab` folder that lists this
language: those under DATA_DIR/multi/ and those this language's encode manifests name.
"""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.core.manifest import read_manifest
from pipeline.core.registry import MULTI_DIR

from .inputs import ReportInputs
from .page import Section, esc, percent, table

REPORT = "joint_report.json"   # written by the joint-vocab stage


def _joint_folders(data: ReportInputs, lang: str) -> list[Path]:
    candidates = sorted((data.lang_dir.parent / MULTI_DIR).glob("*/vocab"))
    candidates += [Path(m["joint_vocab"]["folder"]) for _f, m in data.encodings if m.get("joint_vocab")]
    found, seen = [], set()
    for folder in candidates:
        m = read_manifest(folder) if folder.is_dir() else None
        key = folder.resolve()
        if (m and m.get("stage") == "joint-vocab" and lang in (m.get("options") or {}).get("languages", ())
                and key not in seen and (folder / REPORT).is_file()):
            seen.add(key)
            found.append(folder)
    return found


def _change(joint: float, own: float, digits: int, scale: float = 1.0) -> str:
    return f"{scale * joint:.{digits}f} ({scale * own:.{digits}f}, {scale * (joint - own):+.{digits}f})"


def _one(sec: Section, folder: Path, lang: str) -> None:
    rep = json.loads((folder / REPORT).read_text(encoding="utf-8"))
    settings = rep.get("settings") or {}
    sec.add(f"<h3>{esc('+'.join(settings.get('languages', [])))}: {rep.get('vocab_size', 0):,} "
            f"pieces, sampling alpha {settings.get('sampling_alpha')} <small>{esc(folder)}</small></h3>")
    rows = [("language", "text share", "sample share", "sentences sampled (× used)",
             "pieces per word: joint (own, change)", "words kept whole, %", "[UNK] words, %",
             "own vocab size")]
    for code, f in rep.get("languages", {}).items():
        j, o = f.get("joint") or {}, f.get("own")
        rows.append((
            f"{code} (this page)" if code == lang else code,
            percent(f.get("text_share")), percent(f.get("sample_share")),
            f"{f.get('sample_sentences', 0):,} (× {f.get('times_used', 0):g})",
            _change(j["subwords_per_word"], o["subwords_per_word"], 3) if o
            else f"{j['subwords_per_word']:.3f}",
            _change(j["whole_word_share"], o["whole_word_share"], 1, 100) if o
            else percent(j["whole_word_share"]),
            _change(j["unk_word_share"], o["unk_word_share"], 3, 100) if o else percent(j["unk_word_share"], 3),
            f"{o['vocab_size']:,}" if o else "none"))
        if code == lang and o is None:
            sec.warn(f"{lang} has no own vocab to compare the joint vocab with: run `pipeline --lang "
                     f"{lang} vocab --vocab-size {rep.get('vocab_size')}`, then joint-vocab --force")
    sec.add(table(rows, numeric={1, 2}))
    sec.note("Shares: of all the languages' sentences, and of the joint vocab's training sample "
             "(∝ text share^alpha). Figures on each language's held-out sentences; in brackets "
             "its own vocab (DATA_DIR/LANG/vocab) and the joint vocab's change: more pieces per "
             "word and fewer words kept whole are what sharing costs that language.")


def joint_vocab_section(data: ReportInputs, lang: str) -> Section | None:
    folders = _joint_folders(data, lang)
    if not folders:
        return None
    sec = Section("joint-vocab", "Joint vocabulary (several languages)")
    for folder in folders:
        try:
            _one(sec, folder, lang)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            sec.warn(f"{folder / REPORT}: unreadable ({exc})")
    return sec
