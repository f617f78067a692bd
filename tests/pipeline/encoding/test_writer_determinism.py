"""The writer's bytes do not depend on the process: ISA-L's deflate of a tiny input differs
between processes now and then (its fixed-or-dynamic Huffman choice follows the memory layout),
so chunks under ZLIB_BELOW bytes are deflated by zlib, whose output is a function of the bytes."""
from __future__ import annotations

import subprocess
import sys
import zlib

import numpy as np
import pytest

import pipeline.encoding.writer as hdf5_writer
from pipeline.encoding.writer import ZLIB_BELOW, InstanceFileWriter

# Each child deflates, through the writer, the small random 0/1 label chunks on which ISA-L was
# seen to vary (20 to 200 bytes; about one process in eight gave another stream for one of them).
CHILD = r"""
import hashlib, numpy as np
from pipeline.encoding.writer import InstanceFileWriter
rng = np.random.default_rng(42)
w = InstanceFileWriter.__new__(InstanceFileWriter)
w.level = 1
from isal.isal_zlib import compress
w._fast_deflate = compress
out = []
for n in (20, 24, 32, 48, 64, 100, 128, 200, 256, 512, 1000) * 4:
    out.append(hashlib.md5(w._deflate((rng.random(n) < 0.5).astype(np.int8))).hexdigest())
print(hashlib.md5("".join(out).encode()).hexdigest())
"""


def test_small_chunks_are_zlibs_and_large_ones_isals():
    w = InstanceFileWriter.__new__(InstanceFileWriter)
    w.level, w._fast_deflate = 1, lambda raw, level: b"fast"
    small = (np.arange(ZLIB_BELOW - 1) % 2).astype(np.int8)
    assert w._deflate(small) == zlib.compress(small, 1)
    assert w._deflate(np.zeros(ZLIB_BELOW, np.int8)) == b"fast"


def test_a_tiny_file_is_the_same_bytes_from_every_process(tmp_path):
    outs = set()
    for _ in range(3):
        code = (f"import numpy as np\nfrom pipeline.encoding.writer import InstanceFileWriter\n"
                f"rng = np.random.default_rng(0)\n"
                f"with InstanceFileWriter({str(tmp_path / 'x.hdf5')!r}, 7, 16, 3) as w:\n"
                f"    w.write({{'input_ids': rng.integers(0, 99, (7, 16), dtype=np.int32),"
                f" 'input_mask': np.ones((7, 16), np.int8), 'segment_ids': np.zeros((7, 16), np.int8),"
                f" 'masked_lm_positions': np.ones((7, 3), np.int32), 'masked_lm_ids': np.ones((7, 3), np.int32),"
                f" 'next_sentence_labels': (rng.random(7) < 0.5).astype(np.int8)}})\n")
        subprocess.run([sys.executable, "-c", code], check=True)
        outs.add((tmp_path / "x.hdf5").read_bytes())
    assert len(outs) == 1


@pytest.mark.slow
def test_small_chunks_deflate_alike_in_many_fresh_processes():
    """Fails on the old rule (ISA-L for every chunk) with probability about 0.95."""
    if hdf5_writer._isal_deflate is None:
        pytest.skip("isal is not installed")
    digests = {subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                              check=True).stdout for _ in range(24)}
    assert len(digests) == 1
