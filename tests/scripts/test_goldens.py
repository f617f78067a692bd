"""scripts/goldens.py: the hashes ignore what changes from run to run (timings, the scratch
folder's path, a model card's date) and nothing else; --compare says what differs."""
from __future__ import annotations

import json

from tests.helpers.script_module import load_script

goldens = load_script("scripts/goldens.py")


def test_hashes_ignore_timings_paths_and_dates_only(tmp_path):
    work = str(tmp_path)
    a, b = tmp_path / "a" / "manifest.json", tmp_path / "b" / "manifest.json"
    for path, seconds in ((a, 1.5), (b, 9.0)):
        path.parent.mkdir()
        path.write_text(json.dumps({"input": seconds, "seconds": seconds, "output": f"{work}/x",
                                    "outputs": [{"path": "vocab_report.json", "sha256": str(seconds)}],
                                    "options": {"seed": 1}}))
    assert goldens.file_hash(a, work) == goldens.file_hash(b, work)
    b.write_text(b.read_text().replace('"seed": 1', '"seed": 2'))
    assert goldens.file_hash(a, work) != goldens.file_hash(b, work)
    card = tmp_path / "README.md"
    card.write_text(f"exported 2025-01-02 from {work}/run\n")
    first = goldens.file_hash(card, work)
    card.write_text(f"exported 2026-11-27 from {work}/run\n")
    assert goldens.file_hash(card, work) == first


def test_compare_names_each_difference(capsys):
    assert goldens.compare({"hashes": {"x": "1", "y": "2"}}, {"hashes": {"x": "1", "y": "2"}}) == 0
    assert goldens.compare({"hashes": {"x": "1", "y": "2"}}, {"hashes": {"x": "1", "y": "3", "z": "4"}}) == 1
    out = capsys.readouterr().out
    assert "different: y" in out and "only in the second: z" in out
