"""The dataset cards `pipeline export` writes: README.md with the YAML header that Hugging Face
`datasets` reads (configs with data_files per split, license, language) and a body that says
where the data came from, from the stages' manifests: the dump and its date, the web corpora
ingest fetched (repository, commit, the language's part, licence), the filters, what share of the
articles and text was kept.

Usage:
    name = config_name("uk", "2023-05-01", content_fingerprint)          # ukwiki-20230501-3f2a9c1d0e
    articles_card("uk", summary, manifests, splits=["train", "test"], config=name)   # --format parquet
    tokens_card("uk", summary, encode_manifest, splits=["train"], config=name)       # --format tokens

The config is named after the corpus (its wiki, its dump's date where known, a fingerprint of the
files), never "default": `datasets` keys its cache for `load_dataset(FOLDER)` by the folder's
name and the config's name and patterns only, so two exports both in folders named `parquet`
would otherwise share one cache entry and the second would load the first one's rows.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from common.dump_date import dump_date

LICENSE = "cc-by-sa-4.0"


def card(front: dict, body: str) -> str:
    """README.md: the YAML header (block style; scalars as JSON, which YAML reads) and the body."""
    return "---\n" + _yaml(front, 0) + "---\n\n" + body.rstrip() + "\n"


def config_name(lang: str, date: str, fingerprint: str) -> str:
    """The card's one config: `{lang}wiki-{YYYYMMDD}-{fingerprint}`, the date left out where it is
    not known; `fingerprint` is a hash of the data files (a new export with other rows, a new name)."""
    day = date.replace("-", "") if re.fullmatch(r"\d{4}-\d{2}-\d{2}", date) else ""
    return "-".join(part for part in (f"{lang}wiki", day, fingerprint) if part)


def web_corpora(manifests: dict) -> dict:
    """{source: where it came from and its licence} of the web corpora ingest fetched (its
    manifest's "corpora": pipeline/corpora/locate.py's provenance), {} where there are none."""
    return (manifests.get("ingest") or {}).get("corpora") or {}


def licenses(web: dict) -> list[str]:
    """Wikipedia's licence, then each web corpus's (the Hub's identifiers), each once."""
    return list(dict.fromkeys([LICENSE, *(lic for c in web.values() for lic in c.get("license") or [])]))


def web_lines(web: dict) -> list[str]:
    """A line a web corpus: what it is, which part of it, and the terms it comes under."""
    return [f"- Web corpus `{name}`: {c.get('title')} ({c.get('repo')} at `{str(c.get('revision'))[:12]}`"
            f"{', its `' + c['language'] + '` part' if c.get('language') else ''}, {c.get('slice_files')} "
            f"files, {c.get('url')}), under {c.get('license_text')}." for name, c in web.items()]


def _front(lang: str, pretty_name: str, splits: list[str], categories: list[str], config: str,
           license_ids: list[str] | None = None) -> dict:
    ids = license_ids or [LICENSE]
    return {"language": [lang], "license": ids[0] if len(ids) == 1 else ids, "pretty_name": pretty_name,
            "task_categories": categories,
            "configs": [{"config_name": config, "default": True,
                         "data_files": [{"split": s, "path": f"data/{s}-*.parquet"} for s in splits]}]}


def dump_of(manifests: dict) -> tuple[str, str]:
    """(the dump's file name, its date as the model card says it: common/dump_date.py)."""
    extract = manifests.get("extract") or {}
    path = extract.get("dump") or ""
    name = Path(path).name if path else "unknown"
    fetched = ((manifests.get("download") or {}).get("summary") or {}).get("date")
    return name, dump_date(name if path else None, fetched, (extract.get("summary") or {}).get("newest_revision"))


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.1%}" if whole else "n/a"


def articles_card(lang: str, summary: dict, manifests: dict, splits: list[str], config: str) -> str:
    """The card of `export --format parquet`."""
    dump, date = dump_of(manifests)
    ex, fo, fi, sh = (manifests[s]["summary"] for s in ("extract", "format", "filter", "shard"))
    dedup = (manifests.get("dedup") or {}).get("summary")
    filter_opts = {k: v for k, v in (manifests["filter"].get("options") or {}).items() if k != "lang"}
    reasons = ", ".join(f"{k} {v:,}" for k, v in (fi.get("rejections") or {}).items()) or "none"
    articles = ex.get("documents", 0)
    lines = [
        f"# {lang}wiki, cleaned by wiki2bert",
        "",
        f"The articles of the {lang} Wikipedia as wiki2bert's pipeline cleaned, split and filtered them "
        "for BERT pretraining: one article a row, the documents of the corpus as its shard stage "
        "placed them (each once).",
        "",
        "| column | meaning |", "|---|---|",
        "| id | the page id in the dump (own corpora: SOURCE:FILE:INDEX) |",
        "| title | the article's title |", "| url | the article on its Wikipedia |",
        f"| language | `{lang}` |", "| source | `wikipedia`, or the name of an ingested corpus |",
        "| text | the cleaned article: paragraphs separated by a blank line |",
        "| sentences | the article's sentences, as the pipeline split them (what the HDF5 encodes) |",
        "| split | `training` or `test` (held out), as the shard stage assigned it |",
        "",
        "## Source and processing", "",
        f"- Dump: `{dump}`, dated {date}. Text under CC BY-SA 4.0 (Wikipedia contributors).",
        *web_lines(web_corpora(manifests)),
        f"- Extracted: {articles:,} articles (namespace 0, no redirects; dropped: "
        f"{json.dumps(ex.get('dropped', {}))}).",
        f"- Formatted: {fo.get('documents', 0):,} articles with text left after cleaning "
        f"({fo.get('dropped', {}).get('empty_articles', 0):,} empty).",
    ]
    if dedup:
        lines.append(f"- Deduplicated: {dedup.get('kept', 0):,} of {dedup.get('documents', 0):,} documents kept.")
    lines += [
        f"- Filtered: {fi.get('kept', 0):,} of {fi.get('documents', 0):,} documents kept; rejected: {reasons}; "
        f"{fi.get('repeated_lines', 0):,} repeated lines removed. Settings: `{json.dumps(filter_opts)}`.",
        f"- Sharded: {sh.get('training_documents', 0):,} training and {sh.get('test_documents', 0):,} "
        f"held-out documents (seed {(manifests['shard'].get('options') or {}).get('seed')}).",
        f"- Here: {summary['documents']:,} articles ({summary['training_documents']:,} training, "
        f"{summary['test_documents']:,} test), {summary['sentences']:,} sentences, "
        f"{summary['text_bytes'] / 1e6:,.1f} MB of text.",
        f"- Kept: {_share(summary['documents'], articles)} of the extracted articles; "
        f"{_share(fi.get('output_bytes', 0), fo.get('output_bytes', 0))} of the formatted text bytes "
        "passed the filter.",
        "", "## Loading", "", "```python", "import datasets",
        f'ds = datasets.load_dataset("THIS_FOLDER")          # its one config, {config}',
        'stream = datasets.load_dataset("THIS_FOLDER", split="train", streaming=True)',
        "```",
        "",
        f"The config's name, `{config}`, is this corpus's own (wiki, dump date, a fingerprint of the "
        "files): `datasets` caches a folder under its name and its config's, so another export in a "
        "folder of the same name never loads from this one's cache, nor this one from its.",
    ]
    return card(_front(lang, f"{lang}wiki cleaned by wiki2bert", splits, ["fill-mask", "text-generation"],
                       config, licenses(web_corpora(manifests))), "\n".join(lines))


def tokens_card(lang: str, summary: dict, encode: dict, splits: list[str], config: str,
                web: dict | None = None) -> str:
    """The card of `export --format tokens`; `web`: the web corpora ingest fetched (web_corpora()),
    of which those whose text the encode holds (its manifest's sources) are named with their
    licences, as the articles' card names them."""
    opts = encode.get("options") or {}
    in_rows = encode.get("sources") or None   # {}: an encode of shards without per-source counts
    web = {name: c for name, c in (web or {}).items() if in_rows is None or name in in_rows}
    tok = encode.get("tokenizer") or {}
    lines = [
        f"# {lang}wiki token rows, from wiki2bert's packed encode",
        "",
        f"The rows of `{Path(summary['encode']).name}` (`pipeline encode --pack`), unmasked: the "
        "static masks were undone, so a reader's collator masks them anew. Documents back to back, "
        f"rows of {summary['seq_len']} tokens each beginning with the tokenizer's CLS token, only a "
        "shard's last row shorter. The tokenizer is in `tokenizer/` "
        "(`transformers.AutoTokenizer.from_pretrained`).",
        "",
        "| column | meaning |", "|---|---|",
        "| input_ids | token ids (int32) |", "| attention_mask | 1 for every token (no padding is stored) |",
        "| special_tokens_mask | 1 at the tokenizer's special tokens (CLS, SEP, ...): never masked |",
        "| len | the row's tokens |",
    ]
    if summary.get("doc_starts"):
        lines.append("| doc_starts | 1 where a document's segment starts (packed layout 2): for "
                     "attention within documents |")
    lines += [
        "",
        f"- Rows: {summary['training_rows']:,} training, {summary['test_rows']:,} test; "
        f"{summary['tokens']:,} tokens.",
        f"- Dupe factor {opts.get('dupe_factor')}: each document is in the rows that many times "
        "(in another order each time); encode with `--dupe-factor 1` for one copy.",
        f"- Tokenizer: {tok.get('kind', 'wordpiece')}, {tok.get('size', '?')} tokens, fingerprint "
        f"`{str(tok.get('fingerprint', ''))[:16]}`.",
        "- Text under CC BY-SA 4.0 (Wikipedia contributors).",
        *web_lines(web),
        "", "## Training with transformers", "", "```python",
        "import datasets, transformers",
        'tok = transformers.AutoTokenizer.from_pretrained("THIS_FOLDER/tokenizer")',
        f'ds = datasets.load_dataset("THIS_FOLDER")          # its one config, {config}',
        "collator = transformers.DataCollatorForLanguageModeling(tok, mlm_probability=0.3)",
        'trainer = transformers.Trainer(model=model, args=args, train_dataset=ds["train"], data_collator=collator)',
        "```",
    ]
    return card(_front(lang, f"{lang}wiki token rows (wiki2bert)", splits, ["fill-mask"], config,
                       licenses(web)), "\n".join(lines))


def _yaml(value, indent: int) -> str:
    pad = " " * indent
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict | list) and v:
                out.append(f"{pad}{k}:\n{_yaml(v, indent + 2)}")
            else:
                out.append(f"{pad}{k}: {json.dumps(v, ensure_ascii=False)}\n")
    else:
        for item in value:
            if isinstance(item, dict) and item:
                out.append(f"{pad}- {_yaml(item, indent + 2)[indent + 2:]}")
            else:
                out.append(f"{pad}- {json.dumps(item, ensure_ascii=False)}\n")
    return "".join(out)
