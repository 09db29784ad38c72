// The Loci HTTP API as the extension uses it: list brains, save a page, ask (Server-Sent Events)
// and search. Shared by the popup and the service worker (importScripts), and required by Node's
// tests; it needs only `fetch`, which each of them has.
//
// Every failure becomes a LociApiError with a sentence a person can act on: the server's own
// `{"error", "message"}` when it sent one, otherwise what went wrong on the way.
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.LociApi = api;
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

  class LociApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.name = "LociApiError";
      this.status = status;
      this.code = code;
    }
  }

  /** The server's base URL from what a person typed: http(s) only, no trailing slash. */
  function normalizeServer(typed) {
    let text = String(typed || "").trim();
    if (!text) throw new LociApiError(0, "invalid_input", "Enter the address of your Loci server.");
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) text = `http://${text}`;
    let url;
    try {
      url = new URL(text);
    } catch {
      throw new LociApiError(0, "invalid_input", `"${typed}" is not a web address.`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new LociApiError(0, "invalid_input", "The server address must start with http:// or https://.");
    }
    const path = url.pathname.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
    return `${url.origin}${path}`;
  }

  /** The host-permission pattern that lets the extension talk to `server` (any port). */
  function originPattern(server) {
    const url = new URL(server);
    return `${url.protocol}//${url.hostname}/*`;
  }

  const MESSAGES = {
    401: "The server refused the token: check it, or make a new one with `loci tokens create`.",
    403: "This token may not do that (a read-only token cannot save).",
    404: "That brain is not there, or this token cannot see it.",
    413: "The page is larger than the server accepts.",
  };

  async function failure(response) {
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    const code = (body && body.error) || `http_${response.status}`;
    const message =
      (response.status === 401 && MESSAGES[401]) ||
      (body && body.message) ||
      MESSAGES[response.status] ||
      `The server answered ${response.status}.`;
    return new LociApiError(response.status, code, message);
  }

  /**
   * An SSE reader: feed it text as it arrives (`push`), then `end()`; it calls
   * `onEvent(type, data)` for each event, with `data` parsed as JSON when it is JSON.
   */
  function eventStream(onEvent) {
    let buffer = "";
    const dispatch = (block) => {
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue; // a comment: keep-alive
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") type = value;
        else if (field === "data") data.push(value);
      }
      if (!data.length) return;
      let parsed = data.join("\n");
      try {
        parsed = JSON.parse(parsed);
      } catch {
        // not JSON: handed on as text
      }
      onEvent(type, parsed);
    };
    return {
      push(text) {
        buffer += text.replace(/\r\n?/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          dispatch(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      },
      end() {
        if (buffer.trim()) dispatch(buffer);
        buffer = "";
      },
    };
  }

  /** A client for one server and token. `fetchImpl` defaults to the global fetch. */
  function createClient({ server, token, fetchImpl }) {
    const base = `${normalizeServer(server)}/api/v1`;
    const doFetch = fetchImpl || ((...args) => fetch(...args));
    const path = (brain) => `/brains/${encodeURIComponent(brain)}`;

    async function send(method, url, body, extra) {
      const headers = { Accept: "application/json", Authorization: `Bearer ${token}` };
      if (body !== undefined) headers["Content-Type"] = "application/json";
      let response;
      try {
        response = await doFetch(base + url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          credentials: "omit",
          ...extra,
        });
      } catch (error) {
        if (extra && extra.signal && extra.signal.aborted) {
          throw new LociApiError(0, "aborted", "Stopped.");
        }
        throw new LociApiError(0, "unreachable", `Cannot reach the Loci server at ${base.slice(0, -7)}.`);
      }
      if (!response.ok) throw await failure(response);
      return response;
    }

    return {
      base,
      /** Who the token belongs to, and the token itself ({user, token: {scope, …}}). */
      async me() {
        return (await send("GET", "/me")).json();
      },
      /** The brains this token can read: [{name, role, …}]. */
      async brains() {
        return (await send("GET", "/brains")).json();
      },
      /** Keep an extracted page ({url, title, markdown}) in `brain`; resolves {document, deduped}. */
      async savePage(brain, page, tags) {
        const body = { url: page.url, title: page.title || null, markdown: page.markdown };
        if (tags && tags.length) body.tags = tags;
        return (await send("POST", `${path(brain)}/urls`, body)).json();
      },
      async document(brain, id) {
        return (await send("GET", `${path(brain)}/files/${encodeURIComponent(id)}`)).json();
      },
      /** The best passages for `query`: [{document_id, name, title, snippet, source_url, …}]. */
      async search(brain, query, limit) {
        const body = { query, limit: limit || 5 };
        return (await (await send("POST", `${path(brain)}/search`, body)).json()).hits;
      },
      /**
       * Ask `brain`; `onEvent(type, data)` sees each event (`status`, `sources`, `token`, …,
       * `done` or `error`). Resolves with the `done` event's data.
       */
      async ask(brain, question, { conversationId, onEvent, signal } = {}) {
        const body = { question };
        if (conversationId) body.conversation_id = conversationId;
        const response = await send("POST", `${path(brain)}/ask`, body, { signal });
        let done = null;
        let failed = null;
        const stream = eventStream((type, data) => {
          if (type === "done") done = data;
          if (type === "error") failed = data;
          if (onEvent) onEvent(type, data);
        });
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          let chunk;
          try {
            chunk = await reader.read();
          } catch {
            if (signal && signal.aborted) throw new LociApiError(0, "aborted", "Stopped.");
            throw new LociApiError(0, "unreachable", "The answer was cut off.");
          }
          if (chunk.done) break;
          stream.push(decoder.decode(chunk.value, { stream: true }));
        }
        stream.push(decoder.decode());
        stream.end();
        if (failed) throw new LociApiError(500, failed.error || "error", failed.message || "The answer failed.");
        if (!done) throw new LociApiError(0, "incomplete", "The answer ended before it was finished.");
        return done;
      },
    };
  }

  return { LociApiError, normalizeServer, originPattern, eventStream, createClient };
});
