"""An export says what it did and nothing else (issue 52): no DeepSpeed import, and so no
"Setting accelerator to CPU" warning, in an export that does not use DeepSpeed (transformers'
save_pretrained asked accelerate, which imported it), and no progress bar in a log file."""
from __future__ import annotations

import subprocess
import sys

from tests.helpers.trainer_cli import ROOT, env
from tests.trainer.export.test_export_tokenizers import run_dir, tokenizer

CHECK = ("import sys; from trainer.export.cli import main; rc = main(sys.argv[1:]); "
         "print('deepspeed imported:', 'deepspeed' in sys.modules); sys.exit(rc)")


def test_an_export_imports_no_deepspeed_and_writes_no_bar_into_a_log(tmp_path):
    run = run_dir(tmp_path / "run", tokenizer(tmp_path, "wordpiece"), "modernbert")
    log = tmp_path / "export.log"   # stderr a file, as under make pretrain's tee or a cluster job
    with open(log, "w", encoding="utf-8") as fh:
        res = subprocess.run([sys.executable, "-c", CHECK, "--checkpoint_dir", str(run), "--output",
                              str(tmp_path / "hf")], stdout=subprocess.PIPE, stderr=fh, text=True,
                             cwd=ROOT, env=env(), timeout=300)
    text = log.read_text(encoding="utf-8")
    assert res.returncode == 0, text[-3000:]
    assert "deepspeed imported: False" in res.stdout and "exported" in res.stdout + text
    assert "Setting accelerator" not in text and "Writing model shards" not in text, text
    assert (tmp_path / "hf" / "model.safetensors").is_file()
