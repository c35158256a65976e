"""A local HTTP server that answers the Hub endpoints huggingface_hub calls to create a repo, a
branch and a commit. Only the network is replaced: the client code under test is the real one."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class HubHandler(BaseHTTPRequestHandler):
    """The endpoints of one FakeHub (its `hub`, set on a subclass per server)."""

    hub: FakeHub

    def log_message(self, *args):  # quiet
        pass

    def _body(self) -> bytes:
        data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        return data

    def _reply(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        path = self.path.split("?")[0]
        self.hub.requests.append(("POST", path))
        body = self._body()
        parts = path.strip("/").split("/")
        if path == "/api/repos/create":
            return self._create(json.loads(body))
        if path == "/api/validate-yaml":
            return self._validate(json.loads(body)["content"])
        if len(parts) >= 6 and parts[:2] in (["api", "models"], ["api", "spaces"]):
            return self._repo_action(f"{parts[2]}/{parts[3]}", parts[4], "/".join(parts[5:]), body)
        return self._reply(404, {"error": f"not answered by the fake hub: {path}"})

    def _create(self, info: dict):
        hub = self.hub
        repo_id = f"{info.get('organization') or 'user'}/{info['name']}"
        if repo_id in hub.repos:
            return self._reply(409, {"error": "You already created this model repo", "url": f"{hub.url}/{repo_id}"})
        hub.repos[repo_id] = {
            "private": bool(info.get("private")),
            "type": info.get("type", "model"),
            "sdk": info.get("sdk"),
            "branches": {"main": {}},
        }
        return self._reply(200, {"url": f"{hub.url}/{repo_id}", "name": repo_id})

    def _validate(self, content: str):
        """The Hub checks a card's metadata before committing it; so does this stand-in, with the library's own
        parser of model cards."""
        from huggingface_hub import ModelCard

        try:
            ModelCard(content, ignore_metadata_errors=False)
        except Exception as err:
            return self._reply(400, {"errors": [{"message": str(err)}]})
        self.hub.validated += 1
        return self._reply(200, {"errors": [], "warnings": []})

    def _repo_action(self, repo_id: str, action: str, revision: str, body: bytes):
        if repo_id not in self.hub.repos:
            return self._reply(404, {"error": "Repository not found"})
        branches = self.hub.repos[repo_id]["branches"]
        if action == "preupload":
            files = json.loads(body)["files"]
            return self._reply(
                200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]}
            )
        if action == "branch":
            branches.setdefault(revision, dict(branches["main"]))
            return self._reply(200, {})
        if action == "commit":
            return self._commit(repo_id, revision, body)
        return self._reply(404, {"error": f"not answered by the fake hub: {action}"})

    def _commit(self, repo_id: str, revision: str, body: bytes):
        hub = self.hub
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        header = next(line["value"] for line in lines if line["key"] == "header")
        files = {}
        for line in lines:
            if line["key"] == "file":
                files[line["value"]["path"]] = base64.b64decode(line["value"]["content"])
        branches = hub.repos[repo_id]["branches"]
        if revision not in branches:
            return self._reply(404, {"error": f"Invalid rev id: {revision}"})
        branches[revision].update(files)
        oid = hashlib.sha1(body).hexdigest()
        hub.commits.append({"repo": repo_id, "revision": revision, "summary": header["summary"], "files": files})
        return self._reply(200, {"commitUrl": f"{hub.url}/{repo_id}/commit/{oid}", "commitOid": oid, "success": True})


class FakeHub:
    def __init__(self):
        self.repos: dict[str, dict] = {}  # repo id -> {"private", "type", "sdk", "branches": {name: {path: bytes}}}
        self.commits: list[dict] = []  # {"repo", "revision", "summary", "files": {path: bytes}}
        self.requests: list[tuple[str, str]] = []
        self.validated = 0  # model cards whose metadata passed validation
        handler = type("Handler", (HubHandler,), {"hub": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
