"""A Hub dataset repository at one commit: its files listed, and each as a verified local file,
through huggingface_hub's own client (HF_ENDPOINT, HF_TOKEN, HF_HUB_CACHE, HF_HUB_OFFLINE as
it reads them).

Where the files come from:
  online   (default) the revision is pinned to its commit and the repository's listing cached
           by huggingface_hub (snapshot_download of no file: its tree cache, which offline runs
           and `hf download` share); each file is fetched on its own (hf_hub_download, into the
           Hugging Face cache), so a cut run keeps every file it finished, then verified: the
           sha256 of its bytes against the Hub's (the LFS oid huggingface_hub names the blob by;
           git's blob id for small files). A mismatch is fetched once more, then one line.
  offline  (HF_HUB_OFFLINE=1) the same listing and files from the cache; what is not cached is
           one line, before anything is written.
  mirror   (--corpus-root DIR) DIR laid out as the repository (a `hf download --local-dir`, a
           cluster's copy): listed and read where it is.

Usage:
    repo = open_repo("HuggingFaceFW/fineweb-2")                # or mirror=Path("/data/fineweb-2")
    files = repo.matching(["data/hun_Latn/train/*.parquet"])   # [RemoteFile(path, size)], sorted
    path = repo.local_path(files[0])                           # fetched and verified once
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import httpx2  # huggingface_hub's HTTP client (its dependency): a connection it gave up on
import huggingface_hub
from huggingface_hub import constants, errors
from huggingface_hub import utils as hf_utils
from huggingface_hub.file_download import repo_folder_name

from pipeline.core.errors import StageError
from pipeline.core.report import human_bytes

DATASET = "dataset"
OFFLINE_HINT = ("run once with the network (HF_HUB_OFFLINE unset) or `hf download` it on a machine "
                "that has one, or give a local copy with --corpus-root DIR")
logging.getLogger("httpx2").setLevel(logging.WARNING)   # a line per HTTP request is no news either


@dataclass(frozen=True)
class RemoteFile:
    path: str      # in the repository, '/'-separated
    size: int


@dataclass
class Repo:
    """A repository's files at one commit (see the module doc); `where` is hub, cache or mirror."""

    repo: str
    commit: str
    where: str
    sizes: dict[str, int]
    root: Path | None = None            # the mirror's folder
    verified: set[str] = field(default_factory=set)

    def folders(self, under: str) -> list[str]:
        """The names of the folders directly under `under` ("" the top), sorted."""
        prefix = f"{under.strip('/')}/" if under.strip("/") else ""
        return sorted({p[len(prefix):].split("/", 1)[0] for p in self.sizes
                       if p.startswith(prefix) and "/" in p[len(prefix):]})

    def matching(self, globs) -> list[RemoteFile]:
        """The files matching any of `globs`, sorted: `*` and `?` inside one folder, `**` any folders."""
        pats = [_glob_regex(g) for g in globs]
        return [RemoteFile(p, self.sizes[p]) for p in sorted(self.sizes) if any(r.fullmatch(p) for r in pats)]

    def missing(self, files: list[RemoteFile]) -> list[RemoteFile]:
        """Those of `files` not here yet (offline: not cached; online: to be fetched)."""
        if self.where == "mirror":
            return [f for f in files if not (self.root / f.path).is_file()]
        return [f for f in files if not isinstance(self._cached(f), str)]

    def local_path(self, f: RemoteFile) -> Path:
        """`f` as a local file: the mirror's, or the cache's (fetched first when online), verified."""
        if self.where == "mirror":
            path = self.root / f.path
            if not path.is_file():
                raise StageError(f"{path}: missing from the local copy --corpus-root {self.root}")
            return path
        cached = self._cached(f)
        if isinstance(cached, str) and f.path in self.verified:
            return Path(cached)
        if not isinstance(cached, str):
            if self.where == "cache":
                raise StageError(f"{self.repo}/{f.path} is not in the Hugging Face cache and "
                                 f"HF_HUB_OFFLINE is set: {OFFLINE_HINT}")
            cached = self._download(f, force=False)
        if not _intact(cached):
            if self.where == "cache":
                _drop(cached)
                raise StageError(f"{self.repo}/{f.path}: the cached copy's bytes do not match its "
                                 f"checksum (removed): fetch it again online ({OFFLINE_HINT})")
            logging.getLogger("pipeline").warning("%s/%s: its sha256 does not match the Hub's: "
                                                  "fetching it once more", self.repo, f.path)
            _drop(cached)
            cached = self._download(f, force=True)
            if not _intact(cached):
                _drop(cached)
                raise StageError(f"{self.repo}/{f.path}: its sha256 does not match the Hub's, twice "
                                 "(the copy was removed): the Hub's file or something between is "
                                 "damaged; try again later or leave it out (--max-gb, --max-tokens)")
        self.verified.add(f.path)
        return Path(cached)

    def _cached(self, f: RemoteFile):
        return huggingface_hub.try_to_load_from_cache(self.repo, f.path, revision=self.commit,
                                                      repo_type=DATASET)

    def _download(self, f: RemoteFile, force: bool) -> str:
        cache = Path(constants.HF_HUB_CACHE)
        cache.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(cache).free
        if f.size > free:
            raise StageError(f"{self.repo}/{f.path} is {human_bytes(f.size)} but the Hugging Face cache "
                             f"({cache}) has {human_bytes(free)} free: free some space, or set "
                             "HF_HUB_CACHE to a larger disk, or take a smaller slice (--max-gb)")
        with hub_errors(self.repo):
            return huggingface_hub.hf_hub_download(self.repo, f.path, repo_type=DATASET,
                                                   revision=self.commit, force_download=force)


def _glob_regex(glob: str) -> re.Pattern:
    """`glob` as a regex of a '/'-separated path: `*`, `?` and `[...]` inside one folder, a `**`
    folder for any number of folders."""
    out = ""
    for seg in glob.strip("/").split("/"):
        if seg == "**":
            out += "(?:[^/]+/)*"
            continue
        for piece in re.split(r"(\*|\?|\[[^\]]*\])", seg):
            out += {"*": "[^/]*", "?": "[^/]"}.get(piece, piece if piece.startswith("[") else re.escape(piece))
        out += "/"
    return re.compile(out.rstrip("/"))


def _intact(path: str) -> bool:
    """The file's bytes hash to the name huggingface_hub stored its blob under (the Hub's ETag:
    the LFS sha256, or git's blob sha1 for a small file); True when the name is neither."""
    digest = Path(os.path.realpath(path)).name
    if re.fullmatch(r"[0-9a-f]{64}", digest):
        h = hashlib.sha256()
    elif re.fullmatch(r"[0-9a-f]{40}", digest):
        h = hashlib.sha1(f"blob {os.path.getsize(path)}\0".encode())
    else:
        return True
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest() == digest


def _drop(path: str) -> None:
    """Remove a cached file: its blob and the snapshot's link to it."""
    blob = os.path.realpath(path)
    for p in {path, blob}:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)


def open_repo(repo: str, revision: str | None = None, mirror: Path | None = None) -> Repo:
    """The repository `repo` at `revision` (default: main), online, offline or in `mirror`."""
    if mirror is not None:
        root = Path(mirror)
        if not root.is_dir():
            raise StageError(f"--corpus-root {mirror}: no such folder (a local copy laid out as "
                             f"the Hub repository {repo}, e.g. made by `hf download --local-dir`)")
        sizes = {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*")
                 if p.is_file() and not any(s.startswith(".") for s in p.relative_to(root).parts)}
        return Repo(repo, "local copy", "mirror", sizes, root)
    revision = revision or constants.DEFAULT_REVISION
    if constants.is_offline_mode():
        commit = _cached_commit(repo, revision)
        where = "cache"
    else:
        with hub_errors(repo), _quiet():   # lists the repository into huggingface_hub's tree cache
            snapshot = huggingface_hub.snapshot_download(repo, repo_type=DATASET, revision=revision,
                                                         allow_patterns=[])
        commit, where = Path(snapshot).name, "hub"
    try:
        tree = huggingface_hub.get_cached_repo_tree(repo, repo_type=DATASET, revision=commit)
    except errors.CachedRepoTreeNotFoundError:
        if where == "cache":
            raise StageError(f"{repo} ({revision}) has no listing in the Hugging Face cache "
                             f"({constants.HF_HUB_CACHE}) and HF_HUB_OFFLINE is set: {OFFLINE_HINT}") from None
        with hub_errors(repo):   # online, but the cache could not keep the listing (a full disk)
            tree = [f for f in huggingface_hub.HfApi().list_repo_tree(repo, repo_type=DATASET, revision=commit,
                                                                      recursive=True)
                    if isinstance(f, huggingface_hub.hf_api.RepoFile)]
    return Repo(repo, commit, where, {f.path: f.size for f in tree})


def _cached_commit(repo: str, revision: str) -> str:
    if re.fullmatch(r"[0-9a-f]{40}", revision):
        return revision
    ref = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo, repo_type=DATASET) / "refs" / revision
    if not ref.is_file():
        raise StageError(f"{repo} ({revision}) is not in the Hugging Face cache ({constants.HF_HUB_CACHE}) "
                         f"and HF_HUB_OFFLINE is set: {OFFLINE_HINT}")
    return ref.read_text().strip()


@contextlib.contextmanager
def _quiet():
    """The listing call's "Fetching 0 files" bar and "No files matched" warning are no news."""
    log = logging.getLogger("huggingface_hub._snapshot_download")
    level, bars = log.level, not hf_utils.are_progress_bars_disabled()
    log.setLevel(logging.ERROR)
    hf_utils.disable_progress_bars()
    try:
        yield
    finally:
        log.setLevel(level)
        if bars:
            hf_utils.enable_progress_bars()


@contextlib.contextmanager
def hub_errors(repo: str):
    """huggingface_hub's errors as one StageError line each (what went wrong, what to do)."""
    try:
        yield
    except errors.GatedRepoError:
        raise StageError(f"{repo} is gated: accept its terms at {constants.ENDPOINT}/datasets/{repo} "
                         "and log in (`hf auth login` or HF_TOKEN)") from None
    except errors.RepositoryNotFoundError:
        raise StageError(f"{repo}: no such dataset on {constants.ENDPOINT} (or it is private: log in "
                         "with `hf auth login` or HF_TOKEN): check the name") from None
    except errors.RevisionNotFoundError as exc:
        raise StageError(f"{repo}: no such revision ({_first_line(exc)}): check @REVISION") from None
    except errors.RemoteEntryNotFoundError as exc:
        raise StageError(f"{repo}: a file of its listing is gone from the Hub ({_first_line(exc)}): "
                         "rerun to list it again") from None
    except errors.LocalEntryNotFoundError as exc:   # the Hub unreachable and nothing cached
        raise StageError(f"{repo} cannot be fetched: the Hub ({constants.ENDPOINT}) cannot be reached "
                         f"and it is not cached ({_first_line(exc)}): check the network, or "
                         f"{OFFLINE_HINT}") from None
    except errors.HfHubHTTPError as exc:
        raise StageError(f"{repo}: the Hub answered {_first_line(exc)}: try again later") from None
    except httpx2.TransportError as exc:   # huggingface_hub retried and resumed it, then gave up
        raise StageError(f"{repo}: the connection to the Hub ({constants.ENDPOINT}) broke and did not "
                         f"come back ({_first_line(exc)}): check the network and rerun; the files "
                         "fetched so far are kept") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
