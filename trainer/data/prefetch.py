"""Background threads of the training loader: one reads the next shard piece while the
current one is consumed, one assembles finished batches ahead of the training thread.

    prefetch = Prefetcher(load, pieces)      # .next() -> (piece, arrays); .close()
    batches = BatchThread(generator, depth)  # .next() -> batch; .close()
    class Loader(PrefetchedBatches): ...     # __iter__ / close / __del__ over a BatchThread

Both hand an exception raised in their thread to the consumer, and are stopped at exit
before h5py's own clean-up.
"""
from __future__ import annotations

import atexit
import queue
import threading
import weakref
from typing import Iterator

_LIVE: "weakref.WeakSet[Prefetcher | BatchThread]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # A daemon thread frozen at exit inside h5py would hold h5py's lock and hang h5py's own
    # atexit clean-up, so stop the threads first (atexit runs this before h5py's handler).
    # batch threads first: each closes its own piece prefetcher, which it may be waiting on
    for p in sorted(list(_LIVE), key=lambda x: not isinstance(x, BatchThread)):
        p.close()


class Prefetcher:
    """Loads pieces in a background thread, one ahead of the consumer (about two in memory).

    With `finish` (dynamic masking: trainer/data/masking.py), a second thread applies
    finish(piece, arrays) to each loaded piece while the first thread reads the next one: the
    read (h5py, gzip) and the masking (numpy) overlap on two cores; three pieces in memory."""

    def __init__(self, load, pieces: Iterator, finish=None):
        _LIVE.add(self)
        self._load, self._pieces, self._finish = load, pieces, finish
        self._requests: queue.Queue = queue.Queue()
        self._results: queue.Queue = queue.Queue()
        self._loaded: queue.Queue = self._results if finish is None else queue.Queue()
        self._threads = [threading.Thread(target=self._run, name="shard-prefetch", daemon=True)]
        if finish is not None:
            self._threads.append(threading.Thread(target=self._run_finish, name="shard-finish",
                                                  daemon=True))
        for thread in self._threads:
            thread.start()
        for _ in self._threads:   # the reader stays one piece ahead of the finisher
            self._requests.put(True)

    def _run(self):
        try:
            while self._requests.get():
                try:
                    piece = next(self._pieces)
                    self._loaded.put((piece, self._load(piece), None))
                except BaseException as exc:  # handed to the consumer, raised there
                    self._loaded.put((None, None, exc))
                    return
        finally:
            if self._finish is not None:
                self._loaded.put(None)   # the finisher stops after what is queued

    def _run_finish(self):
        while (item := self._loaded.get()) is not None:
            piece, arrays, exc = item
            if exc is None:
                try:
                    arrays = self._finish(piece, arrays)
                except BaseException as err:  # handed to the consumer, raised there
                    piece, arrays, exc = None, None, err
            self._results.put((piece, arrays, exc))
            if exc is not None:
                return

    def next(self):
        piece, arrays, exc = self._results.get()
        if exc is not None:
            raise exc
        self._requests.put(True)  # start loading the following piece now
        return piece, arrays

    def close(self):
        """Stop the threads; waits for the work in progress (at most one read, one finish)."""
        self._requests.put(False)
        for thread in self._threads:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join()


class BatchThread:
    """Runs a batch generator in a background thread, `depth` finished batches ahead: the
    consumer's next() is a queue get, so assembling and pinning stay off the training thread."""

    def __init__(self, batches: Iterator[dict], depth: int):
        _LIVE.add(self)
        self._batches = batches
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="batch-assembly", daemon=True)
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self):
        try:
            for batch in self._batches:
                if not self._put((batch, None)):
                    break
        except BaseException as exc:  # handed to the consumer, raised there
            self._put((None, exc))
        finally:
            self._batches.close()  # the generator closes its piece prefetcher, in this thread

    def next(self) -> dict:
        batch, exc = self._queue.get()
        if exc is not None:
            raise exc
        return batch

    def close(self):
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()


class PrefetchedBatches:
    """The iteration of a training loader whose batches a BatchThread assembles ahead (the one
    language's loader, trainer/data/loader.py, and the mixture, trainer/data/mixture.py): endless
    batches from `samples_consumed` on, `close`, and the thread stopped when the loader goes. The
    loader gives `_assemble(start)`, `batch_size`, `depth` and `samples_consumed`."""

    _batches: BatchThread | None = None

    def __iter__(self) -> Iterator[dict]:
        self.close()
        self._batches = BatchThread(self._assemble(self.samples_consumed), self.depth)
        while True:
            batch = self._batches.next()
            self.samples_consumed += self.batch_size
            yield batch

    def close(self) -> None:
        if self._batches is not None:
            self._batches.close()
            self._batches = None

    def __del__(self):
        self.close()
