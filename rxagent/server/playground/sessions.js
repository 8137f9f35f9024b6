// The sessions panel: the caller's sessions of the selected agent; open one (its messages and
// saved state), delete one (confirmed inside the page), start a new one.

import { brief, h, msgText, outputText, plural, pretty, usageText } from "./util.js";

export class Sessions {
  /**
   * @param {HTMLElement} root the panel
   * @param {import("./api.js").Api} api
   * @param {{onOpen: Function, onDeleted: Function, onError: Function}} handlers
   */
  constructor(root, api, handlers) {
    this.api = api;
    this.handlers = handlers;
    this.list = root.querySelector("#sessions");
    this.view = root.querySelector("#session-view");
    this.agent = null;
    this.current = null;
  }

  async refresh(agent = this.agent) {
    this.agent = agent;
    if (!agent) return;
    try {
      const { sessions } = await this.api.sessions(agent);
      this.render(sessions);
      return sessions;
    } catch (error) {
      this.handlers.onError(error);
      return null;
    }
  }

  setCurrent(id) {
    this.current = id;
    for (const item of this.list.children) {
      if (item.dataset.sessionId === id) item.setAttribute("aria-current", "true");
      else item.removeAttribute("aria-current");
    }
    if (!id) this.view.hidden = true;
  }

  render(sessions) {
    this.list.replaceChildren();
    if (!sessions.length) {
      this.list.append(h("li", { class: "empty", text: "No sessions yet." }));
      return;
    }
    for (const s of sessions) {
      const badges = [];
      if (s.running) badges.push(h("span", { class: "badge running", text: "running" }));
      if (s.pending_approvals && s.pending_approvals.length) {
        badges.push(
          h("span", { class: "badge pending", text: `${s.pending_approvals.length} to approve` }),
        );
      }
      const item = h(
        "li",
        { class: "session", data: { sessionId: s.session_id } },
        h("div", { class: "session-title", text: s.title || "(untitled)" }),
        h("div", {
          class: "session-meta",
          text:
            `${shortId(s.session_id)} · ${plural(s.runs, "run")} · ` +
            `${plural(s.messages, "message")} · ${usageText(s.usage)}`,
        }),
        badges,
        h(
          "div",
          { class: "session-actions" },
          h("button", {
            type: "button",
            class: "open-session",
            text: "Open",
            on: { click: () => this.open(s.session_id) },
          }),
          h("button", {
            type: "button",
            class: "delete-session",
            text: "Delete",
            disabled: s.running,
            on: { click: () => this.confirmDelete(s.session_id, item) },
          }),
        ),
      );
      if (s.session_id === this.current) item.setAttribute("aria-current", "true");
      this.list.append(item);
    }
  }

  async open(id) {
    try {
      const info = await this.api.session(id, this.agent);
      const memory = (info.state && info.state.memory) || [];
      this.view.replaceChildren(
        h("h3", { text: `Session ${id}` }),
        h("p", {
          class: "session-meta",
          text: `version ${info.version} · ${info.running ? "running" : "idle"}`,
        }),
        h(
          "ol",
          { class: "saved-messages" },
          memory.map((m) =>
            h("li", {
              class: `saved saved-${m.role}`,
              text: `${m.role}: ${msgText(m) || summarizeBlocks(m)}`,
            }),
          ),
        ),
        h(
          "details",
          { class: "state-json" },
          h("summary", { text: "Saved state (JSON)" }),
          h("pre", { text: pretty(info.state) }),
        ),
      );
      this.view.hidden = false;
      this.setCurrent(id);
      this.handlers.onOpen(info);
    } catch (error) {
      this.handlers.onError(error);
    }
  }

  confirmDelete(id, item) {
    if (item.querySelector(".confirm")) return;
    const cancel = h("button", { type: "button", class: "cancel-delete", text: "Cancel" });
    const confirm = h("button", {
      type: "button",
      class: "confirm-delete danger",
      text: "Delete for good",
    });
    const box = h(
      "div",
      { class: "confirm", role: "alertdialog", "aria-label": "Confirm delete" },
      h("span", { text: "Delete this session and its messages?" }),
      confirm,
      cancel,
    );
    cancel.addEventListener("click", () => box.remove());
    confirm.addEventListener("click", async () => {
      confirm.disabled = true;
      try {
        await this.api.deleteSession(id, this.agent);
        if (this.current === id) this.setCurrent(null);
        this.handlers.onDeleted(id);
        await this.refresh();
      } catch (error) {
        confirm.disabled = false;
        this.handlers.onError(error);
      }
    });
    item.append(box);
    confirm.focus();
  }
}

function summarizeBlocks(msg) {
  if (!Array.isArray(msg.content)) return "";
  return msg.content
    .map((b) => {
      if (b.type === "tool_use") return `${b.name}(${brief(b.input, 60)})`;
      if (b.type === "tool_result") return `${b.name} → ${brief(outputText(b.output), 60)}`;
      return `[${b.type}]`;
    })
    .join(" ");
}

function shortId(id) {
  return id.length > 16 ? `${id.slice(0, 12)}…` : id;
}
