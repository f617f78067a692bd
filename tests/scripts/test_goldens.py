"""scripts/goldens.py: the hashes ignore what changes from run to run (timings, the scratch
folder's path, a model card's date) and nothing else; --compare says what differs. Run as a
developer runs it, by path."""
from __future__ import annotations

import json

from tests.helpers.goldens_cli import file_hash, goldens


def test_hashes_ignore_timings_paths_and_dates_only(tmp_path):
    work = str(tmp_path)
    a, b = tmp_path / "a" / "manifest.json", tmp_path / "b" / "manifest.json"
    for path, seconds in ((a, 1.5), (b, 9.0)):
        path.parent.mkdir()
        path.write_text(json.dumps({"input": seconds, "seconds": seconds, "output": f"{work}/x",
                                    "outputs": [{"path": "vocab_report.json", "sha256": str(seconds)}],
                                    "options": {"seed": 1}}))
    assert file_hash(a, tmp_path) == file_hash(b, tmp_path)
    b.write_text(b.read_text().replace('"seed": 1', '"seed": 2'))
    assert file_hash(a, tmp_path) != file_hash(b, tmp_path)
    card = tmp_path / "README.md"
    card.write_text(f"exported 2025-01-02 from {work}/run\n")
    first = file_hash(card, tmp_path)
    card.write_text(f"exported 2026-11-27 from {work}/run\n")
    assert file_hash(card, tmp_path) == first


def test_compare_names_each_difference(tmp_path):
    x, y, z = tmp_path / "x.json", tmp_path / "y.json", tmp_path / "z.json"
    x.write_text(json.dumps({"hashes": {"x": "1", "y": "2"}}))
    y.write_text(json.dumps({"hashes": {"x": "1", "y": "2"}}))
    z.write_text(json.dumps({"hashes": {"x": "1", "y": "3", "z": "4"}}))
    assert goldens("--compare", x, y).returncode == 0
    res = goldens("--compare", x, z)
    assert res.returncode == 1
    assert "different: y" in res.stdout and "only in the second: z" in res.stdout
