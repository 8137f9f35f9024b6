// HTTP for the playground: JSON calls and server-sent events read with fetch (EventSource
// cannot POST or send an Authorization header).

const KEY_STORAGE = "rxagent.playground.key";

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || "http_error";
    this.field = error.field || null;
  }
}

export class Api {
  constructor() {
    this.key = null;
    this.remembered = false;
    try {
      const saved = window.sessionStorage.getItem(KEY_STORAGE);
      if (saved) {
        this.key = saved;
        this.remembered = true;
      }
    } catch {
      // storage can be disabled; the key then lives in memory only
    }
  }

  /** Use `key` for every request; `remember` keeps it in this tab's sessionStorage. */
  setKey(key, remember) {
    this.key = key || null;
    this.remembered = Boolean(remember && key);
    try {
      if (this.remembered) window.sessionStorage.setItem(KEY_STORAGE, key);
      else window.sessionStorage.removeItem(KEY_STORAGE);
    } catch {
      this.remembered = false;
    }
  }

  forgetKey() {
    this.setKey(null, false);
  }

  headers(hasBody) {
    const headers = { Accept: "application/json" };
    if (hasBody) headers["Content-Type"] = "application/json";
    if (this.key) headers.Authorization = `Bearer ${this.key}`;
    return headers;
  }

  async json(method, path, body) {
    const init = { method, headers: this.headers(body !== undefined) };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(path, init);
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, data);
    return data;
  }

  agents() {
    return this.json("GET", "/v1/agents");
  }

  sessions(agent) {
    return this.json("GET", `/v1/sessions?agent=${encodeURIComponent(agent)}`);
  }

  session(id, agent) {
    return this.json("GET", sessionPath(id, agent));
  }

  deleteSession(id, agent) {
    return this.json("DELETE", sessionPath(id, agent));
  }

  interrupt(id, agent, reason) {
    return this.json("POST", sessionPath(id, agent, "/interrupt"), { reason: reason ?? null });
  }

  /** Start a streamed run; see `stream`. */
  run(agent, input, sessionId, handlers) {
    const path = `/v1/agents/${encodeURIComponent(agent)}/runs:stream`;
    return this.stream(path, { input, session_id: sessionId || null }, handlers);
  }

  /** Decide a parked call and stream the run it resumes (no events while others wait). */
  decide(id, agent, approvalId, approved, reason, handlers) {
    const path = sessionPath(id, agent, `/approvals/${encodeURIComponent(approvalId)}:stream`);
    return this.stream(path, { approved, reason: reason || null }, handlers);
  }

  /**
   * POST `body` and read the SSE answer: `onOpen(sessionId)` once the headers arrive, then
   * `onEvent(event)` per frame. Resolves with the number of events when the stream ends.
   */
  async stream(path, body, { onOpen, onEvent, signal } = {}) {
    const response = await fetch(path, {
      method: "POST",
      headers: { ...this.headers(true), Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) {
      throw new ApiError(response.status, await response.json().catch(() => null));
    }
    if (onOpen) onOpen(response.headers.get("X-Session-Id"));
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let count = 0;
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      const frames = buffer.split(/\r?\n\r?\n/);
      buffer = done ? "" : frames.pop();
      for (const frame of frames) {
        const event = parseFrame(frame);
        if (event) {
          count += 1;
          onEvent(event);
        }
      }
      if (done) return count;
    }
  }
}

function sessionPath(id, agent, rest = "") {
  return `/v1/sessions/${encodeURIComponent(id)}${rest}?agent=${encodeURIComponent(agent)}`;
}

/** One SSE frame's event JSON, or null for a comment (`: keep-alive`) or an empty frame. */
export function parseFrame(frame) {
  const data = [];
  for (const line of frame.split(/\r?\n/)) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
  }
  return data.length ? JSON.parse(data.join("\n")) : null;
}
