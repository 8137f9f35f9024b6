// The playground: wires the API, the chat, the timeline and the sessions panel together.

import { Api, ApiError } from "./api.js";
import { Chat } from "./chat.js";
import { Sessions } from "./sessions.js";
import { Timeline } from "./timeline.js";
import { h, plural, pretty, seconds, usageText } from "./util.js";

const $ = (selector) => document.querySelector(selector);

class App {
  constructor() {
    this.api = new Api();
    this.agents = [];
    this.agent = null;
    this.sessionId = null;
    this.running = false;
    this.runStart = null;
    this.totals = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cost: 0, runs: 0 };
    this.chat = new Chat($("#messages"));
    this.timeline = new Timeline($("#timeline"), {
      onSelect: (ev) => this.showEvent(ev),
      onDecide: (ev, approved, reason) => this.decide(ev, approved, reason),
    });
    this.sessions = new Sessions($("#sessions-panel"), this.api, {
      onOpen: (info) => this.openSession(info),
      onDeleted: (id) => this.deleted(id),
      onError: (error) => this.fail(error),
    });
    const params = new URLSearchParams(window.location.search);
    this.link = { agent: params.get("agent"), q: params.get("q"), session: params.get("session") };
  }

  async start() {
    this.bind();
    this.showKeyStatus();
    if (await this.loadAgents()) this.followLink();
  }

  bind() {
    $("#send-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.sendInput();
    });
    $("#input").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.sendInput();
      }
    });
    $("#interrupt").addEventListener("click", () => this.interrupt());
    $("#agent").addEventListener("change", (event) => this.selectAgent(event.target.value));
    $("#new-session").addEventListener("click", () => this.newSession());
    $("#refresh-sessions").addEventListener("click", () => this.sessions.refresh());
    $("#clear-timeline").addEventListener("click", () => this.timeline.reset());
    $("#close-detail").addEventListener("click", () => {
      $("#detail").hidden = true;
    });
    $("#key-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.useKey();
    });
    $("#forget-key").addEventListener("click", () => this.forgetKey());
  }

  status(text, kind = "info") {
    const el = $("#status");
    el.textContent = text;
    el.dataset.kind = kind;
  }

  fail(error) {
    if (error instanceof ApiError && error.status === 401) {
      this.askKey("The server asks for an API key.");
      return;
    }
    const text =
      error instanceof ApiError
        ? `${error.status} ${error.code}: ${error.message}`
        : String(error.message || error);
    this.status(text, "error");
  }

  // -- auth -----------------------------------------------------------------------------------

  showKeyStatus() {
    const where = this.api.remembered ? "kept for this tab" : "in memory";
    $("#key-status").textContent = this.api.key ? `API key set (${where})` : "no API key";
    $("#forget-key").hidden = !this.api.key;
  }

  askKey(message) {
    $("#auth").hidden = false;
    $("#layout").hidden = true;
    $("#key-error").textContent = message || "";
    $("#api-key").focus();
  }

  async useKey() {
    const key = $("#api-key").value.trim();
    if (!key) {
      $("#key-error").textContent = "Enter a key.";
      return;
    }
    const previous = { key: this.api.key, remembered: this.api.remembered };
    this.api.setKey(key, $("#remember-key").checked);
    try {
      const loaded = await this.loadAgents();
      if (!loaded) {
        this.api.setKey(previous.key, previous.remembered);
        this.showKeyStatus();
        return;
      }
      $("#api-key").value = "";
      this.status("Key accepted.");
      this.followLink();
    } catch (error) {
      this.fail(error);
    }
  }

  forgetKey() {
    this.api.forgetKey();
    this.showKeyStatus();
    this.askKey("The key is forgotten. Enter one to go on.");
  }

  // -- agents ---------------------------------------------------------------------------------

  /** Load the agents; false (and the key form) when the server wants a key. */
  async loadAgents() {
    let answer;
    try {
      answer = await this.api.agents();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        this.askKey(
          this.api.key ? `The key was refused: ${error.message}` : "This server needs an API key.",
        );
        this.showKeyStatus();
        return false;
      }
      this.fail(error);
      return false;
    }
    this.agents = answer.agents;
    $("#auth").hidden = true;
    $("#layout").hidden = false;
    this.showKeyStatus();
    const select = $("#agent");
    select.replaceChildren(...this.agents.map((a) => h("option", { value: a.name, text: a.name })));
    const wanted =
      this.agents.find((a) => a.name === (this.agent || this.link.agent)) || this.agents[0];
    if (wanted) {
      select.value = wanted.name;
      this.selectAgent(wanted.name, { keepSession: true });
    }
    return true;
  }

  selectAgent(name, { keepSession = false } = {}) {
    const changed = name !== this.agent;
    this.agent = name;
    const info = this.agents.find((a) => a.name === name);
    if (info) {
      const bits = [
        info.kind,
        info.model,
        info.tools.length ? `tools: ${info.tools.join(", ")}` : null,
      ];
      if (info.members && info.members.length) bits.push(`members: ${info.members.join(", ")}`);
      $("#agent-info").textContent = bits.filter(Boolean).join(" · ");
      $("#agent-info").title = info.description || "";
    }
    if (changed && !keepSession) this.newSession();
    this.sessions.refresh(name);
    this.updateUrl();
  }

  /** Follow the deep link once: `session` continues that session, `q` is sent at once. */
  async followLink() {
    const { q, session } = this.link;
    this.link.q = null;
    this.link.session = null;
    if (session) {
      this.sessionId = session;
      this.sessions.setCurrent(session);
      this.showSession();
      this.updateUrl();
      const listed = await this.sessions.refresh(this.agent);
      if (listed && listed.some((s) => s.session_id === session)) await this.sessions.open(session);
    }
    if (q) await this.send(q);
  }

  updateUrl() {
    const params = new URLSearchParams();
    if (this.agent) params.set("agent", this.agent);
    if (this.sessionId) params.set("session", this.sessionId);
    window.history.replaceState(null, "", `${window.location.pathname}?${params}`);
  }

  // -- sessions -------------------------------------------------------------------------------

  showSession() {
    $("#session-label").textContent = this.sessionId ? `session ${this.sessionId}` : "new session";
  }

  newSession() {
    this.sessionId = null;
    this.chat.clear();
    this.timeline.reset();
    this.sessions.setCurrent(null);
    $("#summary").textContent = "";
    $("#detail").hidden = true;
    this.showSession();
    this.updateUrl();
  }

  openSession(info) {
    if (this.running) return;
    if (info.session_id !== this.sessionId) this.timeline.reset();
    this.sessionId = info.session_id;
    this.chat.history((info.state && info.state.memory) || [], this.agent);
    this.showSession();
    this.updateUrl();
    this.status(`Opened session ${info.session_id}.`);
  }

  deleted(id) {
    this.status(`Deleted session ${id}.`);
    if (this.sessionId === id) this.newSession();
  }

  // -- runs -----------------------------------------------------------------------------------

  sendInput() {
    const input = $("#input");
    const text = input.value.trim();
    if (!text || this.running) return;
    input.value = "";
    this.send(text);
  }

  setRunning(running) {
    this.running = running;
    $("#interrupt").hidden = !running;
    $("#send").disabled = running;
    $("#agent").disabled = running;
    $("#new-session").disabled = running;
    document.body.classList.toggle("is-running", running);
  }

  async send(text) {
    if (this.running || !this.agent) return;
    this.chat.user(text);
    await this.stream(
      (handlers) => this.api.run(this.agent, text, this.sessionId, handlers),
      "Running…",
    );
  }

  async decide(ev, approved, reason) {
    if (this.running) {
      this.timeline.undecided(ev.approval_id);
      this.status("Wait for the current run to end.", "error");
      return;
    }
    this.chat.note(
      `${approved ? "Approved" : "Rejected"} ${ev.tool_call.name}${reason ? `: ${reason}` : ""}.`,
    );
    const count = await this.stream(
      (handlers) =>
        this.api.decide(
          this.sessionId || ev.session_id,
          this.agent,
          ev.approval_id,
          approved,
          reason,
          handlers,
        ),
      approved ? "Approved; the run resumes…" : "Rejected; the run resumes…",
    );
    if (count === null) {
      this.timeline.undecided(ev.approval_id);
      return;
    }
    this.timeline.decided(ev.approval_id, approved);
    if (count === 0) this.status("Decision recorded; other calls of the batch still wait.");
  }

  /** Run `start(handlers)` (a streamed request), feeding its events to the views. */
  async stream(start, message) {
    this.setRunning(true);
    this.status(message);
    let count = null;
    try {
      count = await start({
        onOpen: (sessionId) => {
          if (sessionId && sessionId !== this.sessionId) {
            this.sessionId = sessionId;
            this.sessions.setCurrent(sessionId);
            this.showSession();
            this.updateUrl();
          }
        },
        onEvent: (ev) => this.onEvent(ev),
      });
      if (count > 0) this.status("Run finished.");
    } catch (error) {
      this.fail(error);
    } finally {
      this.setRunning(false);
      this.sessions.refresh();
    }
    return count;
  }

  onEvent(ev) {
    const outer = !ev.path || ev.path.length <= 1;
    if (outer && ev.type === "pre_call") this.runStart = ev.timestamp;
    this.timeline.add(ev);
    this.chat.event(ev);
    if (outer && ev.type === "post_call" && ev.result) this.summarize(ev);
  }

  summarize(ev) {
    const result = ev.result;
    const usage = result.usage || {};
    for (const key of ["input_tokens", "output_tokens", "cache_read_tokens", "cost"]) {
      this.totals[key] += Number(usage[key] || 0);
    }
    this.totals.runs += 1;
    const took = this.runStart === null ? "" : ` · ${seconds(ev.timestamp - this.runStart)}`;
    $("#summary").replaceChildren(
      h("div", {
        class: "usage run-usage",
        text:
          `Last run: ${result.stop_reason} · ${plural(result.steps ?? ev.step, "step")} · ` +
          `${usageText(usage)}${took}`,
      }),
      h("div", {
        class: "usage page-usage",
        text: `${plural(this.totals.runs, "run")} on this page: ${usageText(this.totals)}`,
      }),
    );
  }

  async interrupt() {
    if (!this.sessionId) return;
    try {
      await this.api.interrupt(this.sessionId, this.agent, "Interrupted from the playground.");
      this.status("Interrupt sent; the run stops at its next checkpoint.");
    } catch (error) {
      this.fail(error);
    }
  }

  showEvent(ev) {
    $("#detail-title").textContent = `${ev.type} · seq ${ev.seq} · ${(ev.path || []).join("/")}`;
    $("#detail-json").textContent = pretty(ev);
    $("#detail").hidden = false;
  }
}

new App().start();
