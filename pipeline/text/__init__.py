"""What the pipeline knows about text, whatever the stage: dump reading, wikitext cleaning,
sentence splitting, document rules, language id, per-language settings."""
