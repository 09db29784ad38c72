// The extension's API client: server addresses, the SSE reader, and asking a real HTTP server
// (node:http on 127.0.0.1) that streams its answer in awkward pieces.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const http = require("node:http");
const { normalizeServer, originPattern, eventStream, createClient, LociApiError } = require("../api.js");

test("server addresses are normalised to an http(s) base without a trailing slash", () => {
  assert.equal(normalizeServer(" http://127.0.0.1:8765/ "), "http://127.0.0.1:8765");
  assert.equal(normalizeServer("loci.example.org"), "http://loci.example.org");
  assert.equal(normalizeServer("https://example.org/loci/api/v1/"), "https://example.org/loci");
  assert.throws(() => normalizeServer("ftp://example.org"), /must start with http/);
  assert.throws(() => normalizeServer(""), /Enter the address/);
  assert.equal(originPattern("https://example.org:8443/loci"), "https://example.org/*");
});

test("the SSE reader joins events split across chunks and line endings", () => {
  const seen = [];
  const stream = eventStream((type, data) => seen.push([type, data]));
  for (const piece of ['event: status\r\ndata: {"message":"Sear', 'ching"}\r\n\r\n: keep-alive\n\n', "event: token\ndata: {\"text\":\"Hi\"}\n", "\nevent: done\ndata: plain text"]) {
    stream.push(piece);
  }
  stream.end();
  assert.deepEqual(seen, [
    ["status", { message: "Searching" }],
    ["token", { text: "Hi" }],
    ["done", "plain text"],
  ]);
});

function serve(handler) {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

test("ask streams tokens to the caller and resolves with the done event", async (t) => {
  const requests = [];
  const server = await serve((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      requests.push({ url: req.url, auth: req.headers.authorization, body: JSON.parse(body) });
      res.writeHead(200, { "content-type": "text/event-stream" });
      const events = [
        'event: token\ndata: {"text": "The key "}\n\n',
        'event: token\ndata: {"text": "is under the pot [1]."}\n\n',
        'event: done\ndata: {"answer": "The key is under the pot [1].", "citations": [{"number": 1, "name": "shed.md"}], "conversation_id": 9}\n\n',
      ];
      for (const e of events) {
        const cut = Math.floor(e.length / 2); // every event arrives in two pieces
        res.write(e.slice(0, cut));
        await new Promise((r) => setTimeout(r, 5));
        res.write(e.slice(cut));
      }
      res.end();
    });
  });
  t.after(() => server.close());
  const client = createClient({ server: `http://127.0.0.1:${server.address().port}/`, token: "loci_x" });
  const tokens = [];
  const done = await client.ask("my brain", "where is the key?", {
    conversationId: 4,
    onEvent: (type, data) => type === "token" && tokens.push(data.text),
  });
  assert.deepEqual(tokens, ["The key ", "is under the pot [1]."]);
  assert.equal(done.answer, "The key is under the pot [1].");
  assert.equal(done.conversation_id, 9);
  assert.deepEqual(requests, [
    {
      url: "/api/v1/brains/my%20brain/ask",
      auth: "Bearer loci_x",
      body: { question: "where is the key?", conversation_id: 4 },
    },
  ]);
});

test("errors carry the server's code and a sentence to act on", async (t) => {
  const server = await serve((req, res) => {
    const status = req.url.includes("/brains/missing/") ? 404 : 401;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: status === 404 ? "not_found" : "unauthenticated", message: "no brain named missing" }));
  });
  t.after(() => server.close());
  const client = createClient({ server: `http://127.0.0.1:${server.address().port}`, token: "loci_bad" });
  await assert.rejects(client.brains(), (e) => e instanceof LociApiError && e.status === 401 && /refused the token/.test(e.message));
  await assert.rejects(client.search("missing", "x"), (e) => e.code === "not_found" && e.message === "no brain named missing");
  const closed = createClient({ server: "http://127.0.0.1:9", token: "loci_x" });
  await assert.rejects(closed.brains(), (e) => e.code === "unreachable" && /Cannot reach the Loci server at http:\/\/127\.0\.0\.1:9\./.test(e.message));
});

test("a stream that ends without done is an error, not an empty answer", async (t) => {
  const server = await serve((req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end('event: token\ndata: {"text": "half an ans"}\n\n');
  });
  t.after(() => server.close());
  const client = createClient({ server: `http://127.0.0.1:${server.address().port}`, token: "loci_x" });
  await assert.rejects(client.ask("b", "q"), (e) => e.code === "incomplete");
});
