"""A real Loci server for tests: uvicorn on 127.0.0.1, a free port, in a background thread.

`LiveServer` starts the same application `loci serve` runs (API, web app, in-process worker)
over a service the test built, with the owner account bootstrapped, and stops it cleanly.
Requests go over real HTTP with httpx.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from loci.auth.accounts import Accounts
from loci.auth.secret_box import SecretBox
from loci.auth.sso.provider import SsoProvider
from loci.auth.user_models import UserModels
from loci.integrations import Integrations
from loci.server import create_server
from loci.service import Loci
from loci.service.watching import FolderWatcher


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class LiveServer:
    loci: Loci
    run_worker: bool = True
    integrations: Integrations | None = None  # None: the app's default (Slack capture off)
    sources_allowed_roots: tuple[Path, ...] = ()  # where the API may register folders
    sso_providers: tuple[SsoProvider, ...] = ()  # single sign-on (LOCI_OIDC_PROVIDERS)
    password_sign_in: bool = True
    watcher: FolderWatcher | None = None  # watches the registered folders while it serves
    accounts: Accounts = field(init=False)
    owner_token: str = field(init=False)
    url: str = field(init=False)
    user_models: UserModels = field(init=False)
    app: Any = field(init=False)  # the FastAPI application it serves
    _server: uvicorn.Server = field(init=False)
    _thread: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.accounts = Accounts(self.loci.store)
        issued = self.accounts.bootstrap_owner("owner")
        assert issued is not None, "a LiveServer needs a fresh data directory"
        self.owner_token = issued.secret

    def _home(self) -> Path:
        """The service's data directory, where the server keeps its key: the folder holding
        the blob folder, as `Settings` lays it out (beside the SQLite database)."""
        root = getattr(self.loci.blobs, "root", None)
        if root is None:
            raise RuntimeError("a LiveServer needs a service with a data directory")
        return Path(root).parent

    def start(self) -> LiveServer:
        port = free_port()
        box = SecretBox.from_file(self._home() / "secret.key")
        self.user_models = UserModels(
            self.loci.store.accounts, box, self.loci.settings.fetch, timeout_s=5.0
        )
        app = create_server(
            self.loci,
            self.accounts,
            self.user_models,
            run_worker=self.run_worker,
            integrations=self.integrations,
            sources_allowed_roots=self.sources_allowed_roots,
            sso_providers=self.sso_providers,
            password_sign_in=self.password_sign_in,
            watcher=self.watcher,
        )
        self.app = app
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{port}"
        return self

    def idle(self) -> bool:
        """Whether every request it took is done, background work included (Starlette runs a
        request's background tasks, a Slack reply say, inside that request's task)."""
        return not self._server.server_state.tasks

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=60)

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.Client:
        """An HTTP client for the API, authenticated with `token` (the owner's by default;
        pass an empty string for none)."""
        headers = {"Authorization": f"Bearer {token}"} if token != "" else {}
        if token is None:
            headers = {"Authorization": f"Bearer {self.owner_token}"}
        return httpx.Client(base_url=self.url + "/api/v1", headers=headers, timeout=60, **kwargs)

    def wait_ready(
        self, client: httpx.Client, brain: str, document_id: int, timeout: float = 120
    ) -> dict[str, Any]:
        """Poll a document until the worker settles it (ready or failed)."""
        deadline = time.monotonic() + timeout
        while True:
            doc: dict[str, Any] = client.get(f"/brains/{brain}/files/{document_id}").json()
            if doc["status"] != "processing":
                return doc
            if time.monotonic() > deadline:
                raise TimeoutError(f"document {document_id} still processing")
            time.sleep(0.1)


def made(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.text
    body: dict[str, Any] = response.json()
    return body
