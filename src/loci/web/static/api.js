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

export async function request(method, url, body, { quietUnauthenticated = false } = {}) {
  const headers = { Accept: "application/json" };
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
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
  return data;
}

export const api = {
  get: (url, options) => request("GET", url, undefined, options),
  post: (url, body, options) => request("POST", url, body, options),
  put: (url, body) => request("PUT", url, body),
  patch: (url, body) => request("PATCH", url, body),
  delete: (url) => request("DELETE", url),
};

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
