"""bench/bench_long_context.py: the three variants' commands (the same steps, the phases and the
attention flag where they differ) and the medians the table prints."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.script_module import load_script

bench = load_script("bench/bench_long_context.py")


def test_the_variants_differ_only_in_their_rows_and_attention(tmp_path):
    (tmp_path / "runs").mkdir()
    prep = {"lang_dir": tmp_path / "vi", "folders": {n: tmp_path / f"rows{n}" for n in (128, 512, 2048)}}
    cmds = {v: [str(x) for x in bench.train_command(v, 3, 120, 2, prep, tmp_path / "m.json", tmp_path / "runs" / v)]
            for v in bench.VARIANTS}
    for cmd in cmds.values():
        assert cmd[cmd.index("--max_steps") + 1] == "120" and cmd[cmd.index("--seed") + 1] == "3"
    short = cmds["short"]
    assert short[short.index("--input_dir") + 1] == str(tmp_path / "rows128") and "--phases" not in short
    for variant, attention in (("long", "within"), ("long-across", "across")):
        cmd = cmds[variant]
        assert cmd[cmd.index("--doc_attention") + 1] == attention
        phases = json.loads(Path(cmd[cmd.index("--phases") + 1]).read_text())
        assert [p["input_dir"] for p in phases] == [str(tmp_path / f"rows{n}") for n in (128, 512, 2048)]
        assert [p["train_batch_size"] * n for p, n in zip(phases, (128, 512, 2048))] == [2048] * 3
        assert [p["global_rope_theta"] for p in phases] == [10000.0, 10000.0, 160000.0]


def test_spread_is_the_median_and_the_range():
    assert bench.spread([0.3, 0.1, 0.2]) == "0.2000 [0.1000, 0.3000]"
    assert bench.spread([5.0], 0) == "5" and bench.spread([None]) == "-"
