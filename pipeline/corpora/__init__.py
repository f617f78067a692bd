"""Web corpora by language, beside Wikipedia: the named corpora (FineWeb-2 first), a Wikipedia
code's part of each, and the files of that part fetched from the Hugging Face Hub (or a local
mirror laid out as the Hub repository), verified, with their provenance and licence.

  named.py      THE table of named corpora: repository, layout, columns kept, licence
  languages.py  a Wikipedia code -> a corpus's own language folder (langcodes + the irregular
                codes), the nearest languages where a corpus has none
  hub.py        hf://datasets/ORG/REPO[@REV]/GLOB sources: listing (online, HF cache, mirror),
                fetching one file at a time through huggingface_hub, verified against its sha256
  slicing.py    --max-gb / --max-tokens: which files, and how many tokens of each
  tokens.py     the token estimate of a text (words by script, times the pieces a word takes)
  metadata.py   a corpus's own columns per document, in a Parquet file beside each ingested part
  locate.py     locate(): a language's part of a corpus as files + provenance + licence + size
  options.py    ingest's web options and how a task reads a web file (no huggingface_hub)
  plan.py       an ingest's web sources located and checked before it writes, then fetched

The stage is pipeline/stages/ingest.py (`pipeline ingest --corpus fineweb-2`).
"""
