"""pipeline/text/repeats.py: the repeated lines of a corpus found in partitions on disk, the first
copy kept, and a partition's task holding its share of the line hashes, not every file's."""
from __future__ import annotations

import tracemalloc

from pipeline.text import repeats

LONG = "Рядок, що довший за двадцять символів, номер {}"


def scan(work, files: list[list[str]], partitions: int) -> None:
    for index, lines in enumerate(files):
        repeats.scan_file(iter(["\n".join(lines[:len(lines) // 2]) + "\n\n", "\n".join(lines[len(lines) // 2:])]),
                          index, work, partitions)


def test_repeats_after_the_first_copy_are_found_whatever_the_partitions(tmp_path):
    files = [[LONG.format(i) for i in range(10)], [LONG.format(3), "коротко", LONG.format(99), LONG.format(3)]]
    for partitions in (1, 3):
        work = tmp_path / str(partitions)
        work.mkdir()
        scan(work, files, partitions)
        assert sum(repeats.find_repeats(p, len(files), work) for p in range(partitions)) == 2
        assert repeats.repeated_lines(0, work, partitions) == set()
        assert repeats.repeated_lines(1, work, partitions) == {0, 3}   # "коротко" counts as line 1, not a repeat


def test_a_partition_holds_its_share_of_the_hashes_not_every_files_table(tmp_path):
    """At 5 GB of text (73 files, 19 partitions) a partition's task held 655 MB: every file's
    whole table, kept alive by the slices it took."""
    n_files, lines, partitions = 12, 40_000, 8
    scan(tmp_path, [[LONG.format(f * lines + i) for i in range(lines)] for f in range(n_files)], partitions)
    tracemalloc.start()
    repeats.find_repeats(0, n_files, tmp_path)
    _now, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    every_table = n_files * lines * 12                  # hash and line number, 12 bytes a line
    assert peak < every_table / 2, f"{peak / 1e6:.1f} MB for one partition of {every_table / 1e6:.1f} MB"
