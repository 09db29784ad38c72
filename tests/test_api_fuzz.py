"""Property-based fuzzing of the whole HTTP API from `openapi.json`, with schemathesis.

Every operation gets generated requests — boundary values, valid bodies and invalid ones — sent
over real HTTP to a live server with the owner's token, and every response must be what the
schema promises: no 5xx, a documented status and content type, a body matching its schema, a
valid request accepted and an invalid one refused, 405s that name the allowed methods.

Paths name a real brain ("fuzz", with an indexed file and note), since a made-up name only ever
reaches the 404 (the isolation tests cover that). Destructive calls are allowed: whatever a case
deletes or renames is put back before the next. Left out, because they must be:
- fetching a URL (the server would fetch whatever host the fuzzer invents);
- revoking the very token the fuzzer sends (every later case would be a 401 and test nothing);
- a personal chat model is removed after each case (else answers would go to a made-up host).
Saving one resolves its host (to refuse a private address); the resolver answers no made-up
name here, so the fuzzer's hosts never reach DNS.
The server runs without its ingestion worker: parsing what the fuzzer uploads is the parser
tests' job, and embedding it would take most of the time budget.

The budget is `LOCI_FUZZ_EXAMPLES` examples per operation and phase (default 6, about a minute
on 2 cores); set it higher for a deeper run. Generation is deterministic, so a failure repeats.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import assume as hypothesis_assume
from schemathesis.checks import negative_data_rejection, positive_data_acceptance

from loci.embed.base import Embedder
from loci.service import Loci
from tests.support.live_server import LiveServer
from tests.support.paths import REPO
from tests.support.pdf_files import two_page_pdf
from tests.support.services import make_service

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

BRAIN = "fuzz"
MAX_EXAMPLES = int(os.environ.get("LOCI_FUZZ_EXAMPLES", "6"))
# writes whose validity depends on the document they edit or on Markdown inside the body (a
# folder's zone, an id that is taken, a relation's target, frontmatter), or on the backend (a
# brain's text-search language must be one the database has): no schema can say it
SEMANTIC = {
    "ask",  # filters: `created_after` must come before `created_before`, tags not blank
    "answer",
    "search_brain",  # the same filters, checked the same way
    "search_all",
    "save_answer",  # the message must be an answer, not a question
    "rate_answer",  # as save_answer
    "update_brain",
    # A name mixing Latin with Cyrillic or Greek look-alikes, or not in its NFKC form, is
    # refused (`loci.names.check_name`): the schema's pattern admits letters of any script.
    "create_brain",
    "create_user",
    "create_invite",
    "upload_files",
    "import_export",  # `kind` must name a reader, and the file be an export of that kind
    "follow",  # the address must be an http(s) URL on an allowed host
    "create_graph_document",
    "rewrite_graph_document",
    "set_graph_fields",
    "append_graph_timeline",
    "append_graph_evidence",
    "alias_graph_document",
    "link_graph_document",
    "merge_graph_document",
    "move_graph_document",
    "ingest_source_item",
    "share_to_brain",  # a share must carry some text or a link; all three fields may be empty
    "brain_digest",  # `since` is a period (24h, 7d, 2w) or a date, which a string cannot say
    "set_my_model",  # the base_url's host must be an address the server may reach
    # an OAuth request must name a registered client and one of its redirect URIs exactly
    "consent_request",
    "answer_consent",
}
# operations whose success could spoil the cases after them (see Target.restore)
SPOILERS = {
    "delete_brain",
    "update_brain",
    "set_member",
    "remove_member",
    "revoke_token",
    "set_my_model",
}


class Target:
    """The live server, and what keeps it worth fuzzing from one case to the next."""

    def __init__(self, server: LiveServer, loci: Loci) -> None:
        self.server = server
        self.loci = loci
        self.token = server.owner_token
        with server.client() as api:
            self.token_id: int = api.get("/me").json()["token"]["id"]
        self.seed()

    def restore(self) -> None:
        with self.server.client(self.token) as api:
            assert api.get("/me").status_code == 200, "the fuzzer's own token stopped working"
            assert api.delete("/me/model").status_code in (204, 404)
        self.seed()

    def seed(self) -> None:
        """Make sure the brain the paths name exists, with an indexed file and note."""
        with self.server.client(self.token) as api:
            if api.get(f"/brains/{BRAIN}").status_code == 200:
                return
            assert api.post("/brains", json={"name": BRAIN}).status_code == 201
            upload = api.post(
                f"/brains/{BRAIN}/files", files={"files": ("report.pdf", two_page_pdf())}
            )
            assert upload.status_code == 202
            note = api.post(f"/brains/{BRAIN}/notes", json={"text": "# Fuzz\n\nA seeded note."})
            assert note.status_code == 201
            ids = [upload.json()["results"][0]["document"]["id"], note.json()["document"]["id"]]
        brain = self.loci.brain(BRAIN)
        self.loci.library.worker().drain(
            ids,
            lambda: all(self.loci.library.document(brain, i).status != "processing" for i in ids),
        )


def _offline_getaddrinfo(real: Callable[..., Any]) -> Callable[..., Any]:
    """getaddrinfo for IP literals and localhost only: any other name is unknown."""

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        try:
            ipaddress.ip_address(name)
        except ValueError:
            if name != "localhost":
                raise socket.gaierror(socket.EAI_NONAME, "unknown name (offline test)") from None
        return real(host, *args, **kwargs)

    return getaddrinfo


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Target]:
    home = tmp_path_factory.mktemp("fuzz") / "home"
    loci = make_service(home, embedder, job_retry_base_s=0.01)
    server = LiveServer(loci, run_worker=False).start()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(socket, "getaddrinfo", _offline_getaddrinfo(socket.getaddrinfo))
            yield Target(server, loci)
    finally:
        server.stop()
        loci.store.close()


def load_schema() -> schemathesis.BaseSchema:
    """The committed schema (test_api keeps it equal to the app's), with the paths' brain
    pinned; the server's address and token are given per call."""
    raw = json.loads((REPO / "openapi.json").read_text())
    config = schemathesis.Config.from_dict(
        {
            "parameters": {"path.brain": BRAIN},
            # A NUL in any text is a 400 (no schema says so; tests/test_nul_input.py covers it)
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "allow-x00": False,
            },
            "phases": {"stateful": {"enabled": False}},  # the schema declares no links
            "request-timeout": 30,
        }
    )
    return schemathesis.openapi.from_dict(raw, config=config).exclude(operation_id="add_url")


schema = load_schema()


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_the_api_answers_every_generated_request_as_its_schema_says(
    case: schemathesis.Case[Any], target: Target
) -> None:
    operation_id = case.operation.definition.raw.get("operationId")
    if operation_id == "revoke_token":
        # the coverage phase sends path parameters as strings ("1"), the others as numbers
        hypothesis_assume(str(case.path_parameters.get("token_id")) != str(target.token_id))
    # A file's bytes decide whether it is accepted (empty: 400), which no schema can say.
    excluded = [positive_data_acceptance] if operation_id in SEMANTIC else []
    if operation_id in ("upload_files", "import_export"):
        # Every multipart part is bytes: a "file" generated as a JSON object arrives as a file
        # whose bytes are that JSON, so a type violation there cannot be refused.
        excluded.append(negative_data_rejection)
    try:
        case.call_and_validate(
            base_url=target.server.url,
            headers={"Authorization": f"Bearer {target.token}"},
            excluded_checks=excluded,
        )
    finally:
        if operation_id in SPOILERS:
            target.restore()


def test_the_fuzzed_server_still_works(target: Target) -> None:
    """After the fuzzing, the server still answers normally."""
    with target.server.client("") as anonymous:
        assert anonymous.get("/health").json()["status"] == "ok"
    with target.server.client(target.token) as api:
        assert api.get("/me").json()["token"]["id"] == target.token_id
        note = api.post(f"/brains/{BRAIN}/notes", json={"text": "After the storm, calm."})
        assert note.status_code == 201
        read = api.get(f"/brains/{BRAIN}/notes/{note.json()['document']['id']}").json()
        assert read["text"] == "After the storm, calm."
        assert api.post("/search", json={"query": "storm"}).status_code == 200
