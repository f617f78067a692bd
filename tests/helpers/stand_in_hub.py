"""A small stand-in for the Hugging Face Hub on 127.0.0.1: it serves folders laid out as dataset
repositories through the endpoints huggingface_hub 2.4 calls, so the tests run its own client
code (HF_ENDPOINT names the server; nothing leaves the machine).

Endpoints:
    GET  /api/datasets/ORG/REPO/revision/REV      repo_info: the commit (sha) and the files
    GET  /api/datasets/ORG/REPO/tree/REV[/PATH]   list_repo_tree: files with sizes, git oids and
                                                  LFS sha256, folders; ?recursive; pages of
                                                  `page_size` with a Link header, as the Hub
    HEAD/GET /datasets/ORG/REPO/resolve/REV/PATH  a file: ETag (the LFS sha256, git's blob sha1
                                                  for README.md and .gitattributes),
                                                  X-Repo-Commit, Content-Length, Range requests
Every file but README.md and .gitattributes is served as an LFS file, as the Hub serves data.

Faults a test asks for: `corrupt[path] = n` serves the file's first n GETs with one byte
flipped (the same length); `hold(path)` sends half of the file's next GET, then waits until
`release()` (a client killed meanwhile sees a cut download); `cut[path] = n` sends half of the
file's next n GETs and drops the connection; `gated` repos answer 401 GatedRepo.
`gets[path]` counts the GETs of each file.

Usage:
    with StandInHub({"HuggingFaceFW/fineweb-2": repo_dir}) as hub:
        env = hub.env(tmp_path)                     # HF_ENDPOINT, HF_HUB_CACHE, HF_HUB_OFFLINE=0, ...
        subprocess.run([...pipeline ingest --corpus fineweb-2...], env=env)
        hub.gets["data/hun_Latn/train/000_00000.parquet"]   # 1
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

NOT_LFS = ("README.md", ".gitattributes")


def _file_info(path: Path) -> dict:
    data = path.read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "git": hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()}


class StandInHub:
    def __init__(self, repos: dict[str, Path], page_size: int = 1000, gated: tuple[str, ...] = ()):
        self.repos = {repo: Path(folder) for repo, folder in repos.items()}
        self.page_size, self.gated = page_size, set(gated)
        self.files = {repo: {p.relative_to(f).as_posix(): _file_info(p) for p in sorted(f.rglob("*"))
                             if p.is_file()} for repo, f in self.repos.items()}
        self.commits = {repo: hashlib.sha1(json.dumps(files, sort_keys=True).encode()).hexdigest()
                        for repo, files in self.files.items()}
        self.gets: Counter = Counter()
        self.corrupt: Counter = Counter()
        self.cut: Counter = Counter()
        self._hold: str | None = None
        self.held, self._release = threading.Event(), threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StandInHub:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

    def hold(self, path: str) -> None:
        self._hold = path
        self.held.clear()
        self._release.clear()

    def release(self) -> None:
        self._hold = None
        self._release.set()

    def env(self, tmp: Path, offline: bool = False) -> dict:
        """The environment of a process that uses this hub, its HF cache under `tmp`."""
        env = dict(os.environ, HF_ENDPOINT=self.url, HF_HUB_OFFLINE="1" if offline else "0",
                   HF_HOME=str(tmp / "hf_home"), HF_HUB_CACHE=str(tmp / "hf_hub"),
                   HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_ETAG_TIMEOUT="5", HF_HUB_DOWNLOAD_TIMEOUT="5",
                   HF_HUB_DISABLE_XET="1", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        env.pop("HF_TOKEN", None)
        return env

    # -- answers ------------------------------------------------------------------------------

    def tree(self, repo: str, path: str, recursive: bool) -> list[dict]:
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        entries, folders = [], set()
        for p, info in self.files[repo].items():
            if not p.startswith(prefix):
                continue
            rest = p[len(prefix):].split("/")
            for depth in range(1, len(rest)):
                if recursive or depth == 1:
                    folders.add(prefix + "/".join(rest[:depth]))
            if recursive or len(rest) == 1:
                entry = {"type": "file", "oid": info["git"], "size": info["size"], "path": p}
                if not p.endswith(NOT_LFS):
                    entry["lfs"] = {"oid": info["sha256"], "size": info["size"], "pointerSize": 134}
                entries.append(entry)
        entries += [{"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "path": d}
                    for d in folders]
        return sorted(entries, key=lambda e: e["path"])


def _handler(hub: StandInHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:   # quiet
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _error(self, status: int, code: str) -> None:
            self._send(status, json.dumps({"error": code}).encode(), {"X-Error-Code": code})

        def _repo(self, parts: list[str]) -> str | None:
            repo = "/".join(parts[:2])
            if repo not in hub.repos:
                self._error(404, "RepoNotFound")
                return None
            if repo in hub.gated:
                self._error(401, "GatedRepo")
                return None
            return repo

        def _revision(self, repo: str, rev: str) -> bool:
            if unquote(rev) not in ("main", hub.commits[repo]):
                self._error(404, "RevisionNotFound")
                return False
            return True

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.strip("/").split("/")]
            if parts[:2] == ["api", "datasets"] and len(parts) >= 6 and parts[4] in ("revision", "tree"):
                repo = self._repo(parts[2:])
                if repo and self._revision(repo, parts[5]):
                    if parts[4] == "revision":
                        body = {"id": repo, "sha": hub.commits[repo], "private": False,
                                "siblings": [{"rfilename": p} for p in hub.files[repo]]}
                        self._send(200, json.dumps(body).encode(), {"Content-Type": "application/json"})
                    else:
                        self._tree(repo, "/".join(parts[6:]), parse_qs(url.query))
                return
            if parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
                repo = self._repo(parts[1:])
                if repo and self._revision(repo, parts[4]):
                    self._file(repo, "/".join(parts[5:]))
                return
            self._error(404, "EntryNotFound")

        def _tree(self, repo: str, path: str, query: dict) -> None:
            recursive = query.get("recursive", ["False"])[0].lower() == "true"
            entries = hub.tree(repo, path, recursive)
            start = int(query.get("cursor", ["0"])[0])
            page = entries[start:start + hub.page_size]
            headers = {"Content-Type": "application/json"}
            if start + hub.page_size < len(entries):
                base = f"{hub.url}/api/datasets/{repo}/tree/main/{quote(path)}".rstrip("/")
                headers["Link"] = (f'<{base}?recursive={recursive}&expand=False&cursor={start + hub.page_size}>; '
                                   'rel="next"')
            self._send(200, json.dumps(page).encode(), headers)

        def _file(self, repo: str, path: str) -> None:
            info = hub.files[repo].get(path)
            if info is None:
                self._error(404, "EntryNotFound")
                return
            etag = info["git"] if path.endswith(NOT_LFS) else info["sha256"]
            headers = {"ETag": f'"{etag}"', "X-Repo-Commit": hub.commits[repo], "Accept-Ranges": "bytes"}
            if not path.endswith(NOT_LFS):
                headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(info["size"])})
            if self.command == "HEAD":
                self.send_response(200)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(info["size"]))
                self.end_headers()
                return
            hub.gets[path] += 1
            data = (hub.repos[repo] / path).read_bytes()
            if hub.corrupt[path] > 0:
                hub.corrupt[path] -= 1
                data = bytes([data[0] ^ 0xFF]) + data[1:]
            start = 0
            rng = self.headers.get("Range", "")
            if rng.startswith("bytes=") and rng[6:].split("-")[0]:
                start = int(rng[6:].split("-")[0])
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
            if hub._hold == path or hub.cut[path] > 0:
                self._send_cut(path, 206 if start else 200, data[start:], headers)
                return
            self._send(206 if start else 200, data[start:], headers)

        def _send_cut(self, path: str, status: int, body: bytes, headers: dict) -> None:
            """Half of the body, then the connection dropped (`cut`) or a wait (the client is
            killed meanwhile, or released)."""
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            if hub.cut[path] > 0:
                hub.cut[path] -= 1
                self.close_connection = True
                self.connection.shutdown(2)
                return
            hub.held.set()
            hub._release.wait(timeout=60)
            try:
                self.wfile.write(body[len(body) // 2:])
            except OSError:
                pass

    return Handler
