"""The corpus and training report (`pipeline report`): one self-contained HTML page built from
the stages' manifests and bounded samples of their outputs; one module per section."""
