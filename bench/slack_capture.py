"""Slack capture end to end: how long Slack waits for its answer, and how soon the message is
confirmed in its thread and found by search.

    python bench/slack_capture.py [--messages 40]

Starts the real application (uvicorn on 127.0.0.1, in-process worker, the shipped embedding
model) on a temporary data directory with Slack capture configured, and a stand-in for Slack's
Web API on loopback (tests/support/fake_slack.py). Then, one message at a time, it posts a signed
`event_callback` exactly as Slack does and measures:

- answer: request → HTTP 200 (Slack gives up and retries after 3 s);
- reply: request → the `chat.postMessage` confirmation arriving at the stand-in;
- searchable: request → a text search of the brain returning the message (a unique word).

Reports p50 / p95 / max of each, and the load average around the run.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fake_slack import FakeSlack  # noqa: E402
from tests.support.live_server import free_port  # noqa: E402

from loci.app import build_service, secret_box  # noqa: E402
from loci.auth.accounts import Accounts  # noqa: E402
from loci.auth.user_models import UserModels  # noqa: E402
from loci.config import Settings  # noqa: E402
from loci.eval.metrics import percentile  # noqa: E402
from loci.integrations import Integrations  # noqa: E402
from loci.integrations.slack_api import SlackWebApi  # noqa: E402
from loci.integrations.slack_capture import SlackCapture  # noqa: E402
from loci.integrations.slack_links import SlackLinks  # noqa: E402
from loci.integrations.webhooks import Webhooks  # noqa: E402
from loci.server import create_server  # noqa: E402

SECRET = "bench-signing-secret"
TOKEN = "xoxb-bench"


def signed(payload: dict[str, object]) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload).encode()
    stamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256)
    return body, {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": "v0=" + digest.hexdigest(),
        "Content-Type": "application/json",
    }


def summary(name: str, values_ms: list[float]) -> str:
    return (
        f"{name:<11} p50 {percentile(values_ms, 50):7.1f} ms   p95 {percentile(values_ms, 95):7.1f}"
        f" ms   max {max(values_ms):7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=40)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    home = Path(tempfile.mkdtemp(prefix="loci-slack-bench-"))
    settings = Settings(home=home)
    loci = build_service(settings)
    accounts = Accounts(loci.store)
    accounts.bootstrap_owner("owner")
    alice, issued = accounts.add_user("alice")
    loci.store.create_brain("notes", "restricted", alice.id)
    SlackLinks(accounts).link("T0BENCH", "U0ALICE", "alice", "notes")
    fake = FakeSlack(TOKEN).start()
    capture = SlackCapture(loci, accounts, SECRET, SlackWebApi(TOKEN, fake.api_base))
    box = secret_box(settings)
    app = create_server(
        loci,
        accounts,
        UserModels(loci.store.accounts, box, loci.settings.fetch, 5.0),
        integrations=Integrations(Webhooks(loci.store, box), capture),
    )
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    api = httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1", timeout=30)
    auth = {"Authorization": f"Bearer {issued.secret}"}
    # warm up: the first search loads the model
    api.post("/brains/notes/search", json={"query": "warm"}, headers=auth)

    answers, replies, searchable = [], [], []
    for n in range(args.messages):
        word = f"zorbex{n:04d}"
        payload: dict[str, object] = {
            "type": "event_callback",
            "team_id": "T0BENCH",
            "event_id": f"Ev{n:06d}",
            "event": {
                "type": "message",
                "user": "U0ALICE",
                "channel": "C0BENCH",
                "ts": f"{1712345600 + n}.000100",
                "text": f"Remember {word}: the boiler needs servicing before the winter, call Ana.",
            },
        }
        body, headers = signed(payload)
        start = time.perf_counter()
        response = api.post("/integrations/slack/events", content=body, headers=headers)
        answers.append((time.perf_counter() - start) * 1000)
        assert response.json()["outcome"] == "saved", response.text
        replied = found = None
        while replied is None or found is None:
            now = (time.perf_counter() - start) * 1000
            if replied is None and len(fake.posted) > n:
                replied = now
            if found is None:
                hits = api.post(
                    "/brains/notes/search", json={"query": word, "mode": "text"}, headers=auth
                ).json()["hits"]
                if hits:
                    found = (time.perf_counter() - start) * 1000
            if now > 60_000:
                raise TimeoutError(f"message {n} not confirmed or not searchable in 60 s")
            time.sleep(0.01)
        replies.append(replied)
        searchable.append(found)
    server.should_exit = True
    fake.stop()
    print(f"{args.messages} messages, one at a time; load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")  # fmt: skip
    print(summary("answer", answers))
    print(summary("reply", replies))
    print(summary("searchable", searchable))


if __name__ == "__main__":
    main()
