// The one door to the server. JSON requests carry the session's CSRF token on every write;
// uploads go through XMLHttpRequest because fetch cannot report upload progress.

const BASE = "/api/v1";
const SAFE = new Set(["GET", "HEAD"]);

let csrfToken = null;
let onSignedOut = () => {};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function setCsrfToken(token) {
  csrfToken = token;
}

// Called when the server says the session is gone (expired, revoked, signed out elsewhere).
export function whenSignedOut(callback) {
  onSignedOut = callback;
}

export function path(...segments) {
  return segments.map((s) => encodeURIComponent(String(s))).join("/");
}

function failure(status, body) {
  const code = body && typeof body.error === "string" ? body.error : "error";
  const message =
    body && typeof body.message === "string" ? body.message : `The server answered ${status}.`;
  return new ApiError(status, code, message);
}

function unreachable() {
  return new ApiError(0, "network", "The server could not be reached. Check the connection and try again.");
}

// `withTotal`: resolve with {items, total}, the total from the X-Total-Count header of a list
// answered one page at a time.
export async function request(method, url, body, { quietUnauthenticated = false, withTotal = false } = {}) {
  const headers = { Accept: "application/json" };
  const init = { method, headers, credentials: "same-origin" };
  if (body instanceof FormData) {
    init.body = body; // multipart: the browser writes the Content-Type with its boundary
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (!SAFE.has(method) && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  let response;
  try {
    response = await fetch(BASE + url, init);
  } catch {
    throw unreachable();
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401 && !quietUnauthenticated) onSignedOut();
    throw failure(response.status, data);
  }
  if (withTotal) {
    const total = Number(response.headers.get("X-Total-Count"));
    return { items: data, total: Number.isFinite(total) ? total : data.length };
  }
  return data;
}

export const api = {
  get: (url, options) => request("GET", url, undefined, options),
  post: (url, body, options) => request("POST", url, body, options),
  put: (url, body) => request("PUT", url, body),
  patch: (url, body) => request("PATCH", url, body),
  delete: (url) => request("DELETE", url),
};

// POST `body` and read the answer as Server-Sent Events (`event:` and `data:` lines, a blank line
// between events), calling `onEvent(type, data)` for each. EventSource cannot POST or send the
// CSRF header, so this reads the fetch body as it arrives. Abort with `signal`; an aborted stream
// rejects with an ApiError whose code is "aborted".
export async function streamEvents(url, body, { signal, onEvent }) {
  const headers = { Accept: "text/event-stream", "Content-Type": "application/json" };
  if (csrfToken) headers["X-CSRF-Token"] = csrfToken;
  const aborted = () => new ApiError(0, "aborted", "Stopped.");
  let response;
  try {
    response = await fetch(BASE + url, {
      method: "POST",
      headers,
      credentials: "same-origin",
      body: JSON.stringify(body),
      signal,
    });
  } catch {
    throw signal && signal.aborted ? aborted() : unreachable();
  }
  if (!response.ok) {
    const data = await response.json().catch(() => null);
    if (response.status === 401) onSignedOut();
    throw failure(response.status, data);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const dispatch = (block) => {
    let type = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue; // a comment: keep-alive
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") type = value;
      else if (field === "data") data.push(value);
    }
    if (!data.length) return;
    let parsed;
    try {
      parsed = JSON.parse(data.join("\n"));
    } catch {
      parsed = data.join("\n");
    }
    onEvent(type, parsed);
  };
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch {
      throw signal && signal.aborted ? aborted() : unreachable();
    }
    if (chunk.done) break;
    buffer += chunk.value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      dispatch(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
  }
  if (buffer.trim()) dispatch(buffer);
}

// Upload one file; `onProgress(fraction)` follows the bytes sent. Resolves with the server's
// per-file result ({name, document, deduped, error}); rejects with an ApiError.
export function uploadFile(url, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", BASE + url);
    xhr.responseType = "json";
    xhr.setRequestHeader("Accept", "application/json");
    if (csrfToken) xhr.setRequestHeader("X-CSRF-Token", csrfToken);
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener("load", () => {
      const data = xhr.response;
      if (xhr.status >= 200 && xhr.status < 300 && data && Array.isArray(data.results)) {
        resolve(data.results[0]);
        return;
      }
      if (xhr.status === 401) onSignedOut();
      reject(failure(xhr.status, data));
    });
    xhr.addEventListener("error", () => reject(unreachable()));
    xhr.addEventListener("abort", () => reject(new ApiError(0, "aborted", "The upload was cancelled.")));
    const form = new FormData();
    form.append("files", file, file.name);
    xhr.send(form);
  });
}
