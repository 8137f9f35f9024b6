// The timeline: one row per event, grouped by (run, step), nested runs indented by path depth,
// consecutive reasoning chunks folded, hook changes shown as diffs.

import { renderJsonDiff } from "./diff.js";
import { brief, h, millis, msgText, outputText, plural, seconds, usageText } from "./util.js";

export class Timeline {
  /**
   * @param {HTMLElement} list the <ol> that holds the step groups
   * @param {{onSelect?: Function, onDecide?: Function}} handlers row clicked; approval decided
   */
  constructor(list, handlers = {}) {
    this.list = list;
    this.onSelect = handlers.onSelect || (() => {});
    this.onDecide = handlers.onDecide || (() => {});
    this.reset();
  }

  reset() {
    this.list.replaceChildren();
    this.groups = new Map();
    this.latest = new Map();
    this.reasoningStarts = new Map();
    this.eventOf = new WeakMap();
    this.origin = null;
    this.fold = null;
    this.selected = null;
  }

  /** Add one event (as the server sent it) and return its row. */
  add(ev) {
    const path = ev.path && ev.path.length ? ev.path : [ev.agent];
    if (this.origin === null || (ev.type === "pre_call" && path.length <= 1)) {
      this.origin = ev.timestamp;
    }
    this.note(ev);
    const group = this.group(ev, path);
    const row = this.row(ev, path);
    if (ev.type === "reasoning_chunk") this.foldInto(group, row, ev);
    else group.events.append(row);
    if (ev.type === "post_reasoning") group.addUsage(ev.usage);
    if (ev.type === "post_call" && ev.result) group.setTotal(ev.result.usage);
    return row;
  }

  group(ev, path) {
    const key = `${ev.run_id}:${ev.step}`;
    let group = this.groups.get(key);
    if (group) return group;
    const usage = h("span", { class: "usage step-usage" });
    const events = h("ol", { class: "events" });
    const element = h(
      "li",
      {
        class: "step-group",
        data: { runId: ev.run_id, step: ev.step, path: path.join("/"), agent: ev.agent },
      },
      h(
        "div",
        { class: "step-head" },
        h("span", { class: "step-agent", text: path.join(" › ") }),
        h("span", { class: "step-number", text: `step ${ev.step}` }),
        usage,
      ),
      events,
    );
    element.style.setProperty("--depth", String(path.length - 1));
    // a nested run's steps go inside the step of the run that started it, where they happened
    const parent = path.length > 1 ? this.latest.get(path.slice(0, -1).join("/")) : undefined;
    if (parent) {
      element.classList.add("nested");
      parent.events.append(element);
    } else {
      this.list.append(element);
    }
    const totals = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cost: 0 };
    group = {
      element,
      events,
      addUsage(u) {
        if (!u) return;
        for (const k of Object.keys(totals)) totals[k] += Number(u[k] || 0);
        usage.textContent = `step usage: ${usageText(totals)}`;
      },
      setTotal(u) {
        usage.textContent = `run total: ${usageText(u)}`;
        usage.classList.add("run-total");
      },
    };
    this.groups.set(key, group);
    this.latest.set(path.join("/"), group);
    return group;
  }

  foldInto(group, row, ev) {
    const fold = this.fold;
    if (!fold || fold.group !== group || group.events.lastElementChild !== fold.element) {
      const summary = h("summary", { class: "fold-summary" });
      const rows = h("ol", { class: "fold-rows" });
      const element = h(
        "li",
        { class: "chunk-fold" },
        h("details", { class: "fold" }, summary, rows),
      );
      group.events.append(element);
      this.fold = { group, element, summary, rows, count: 0, text: "" };
    }
    const current = this.fold;
    current.rows.append(row);
    current.count += 1;
    const delta = ev.delta || {};
    current.text += delta.text || delta.args || "";
    const tail = current.text.replace(/\s+/g, " ").slice(-70);
    current.summary.textContent = `${plural(current.count, "reasoning_chunk row")} · …${tail}`;
  }

  row(ev, path) {
    const time = this.origin === null ? "" : `+${seconds(ev.timestamp - this.origin)}`;
    const head = h(
      "button",
      { type: "button", class: "row-head", title: "Show the event's JSON" },
      h("span", { class: "etype", text: ev.type }),
      h("span", { class: "etime", text: time }),
      h("span", { class: "esummary", text: summarize(ev) }),
    );
    const row = h(
      "li",
      {
        class: `event type-${ev.type}`,
        data: {
          eventType: ev.type,
          seq: ev.seq,
          runId: ev.run_id,
          path: path.join("/"),
          step: ev.step,
          agent: ev.agent,
        },
      },
      head,
    );
    row.style.setProperty("--depth", String(path.length - 1));
    this.eventOf.set(row, ev);
    head.addEventListener("click", () => this.select(row));
    const body = this.body(ev, row);
    if (body && body.length) row.append(h("div", { class: "row-body" }, body));
    if (ev.modified_by && ev.modified_by.length) {
      row.classList.add("modified");
      row.append(changesView(ev));
    }
    return row;
  }

  select(row) {
    if (this.selected) this.selected.classList.remove("selected");
    this.selected = row;
    row.classList.add("selected");
    this.onSelect(this.eventOf.get(row), row);
  }

  /** Mark the approval rows of `approvalId` decided. */
  decided(approvalId, approved) {
    for (const row of this.list.querySelectorAll(".approval-actions")) {
      if (row.dataset.approvalId !== approvalId) continue;
      row.replaceChildren(
        h("span", {
          class: approved ? "decision approved" : "decision rejected",
          text: approved ? "approved" : "rejected",
        }),
      );
    }
  }

  body(ev, row) {
    switch (ev.type) {
      case "pre_call":
        return (ev.input || []).map((m) => line(`${m.role}: ${brief(msgText(m), 300)}`));
      case "pre_reasoning":
        return [
          line(
            `${ev.model || "model"} · ${plural((ev.messages || []).length, "message")} · ` +
              `${plural((ev.tools || []).length, "tool")}`,
          ),
        ];
      case "reasoning_chunk":
        return [line(deltaText(ev.delta), "chunk")];
      case "output_chunk":
        return [line(brief(ev.partial, 300), "mono")];
      case "post_reasoning": {
        const start = this.reasoningStarts.get(`${ev.run_id}:${ev.step}`);
        const parts = [];
        if (start !== undefined) {
          parts.push(line(`model call ${millis((ev.timestamp - start) * 1000)}`, "duration"));
        }
        parts.push(line(usageText(ev.usage), "usage"));
        const response = ev.response || {};
        for (const block of Array.isArray(response.content) ? response.content : []) {
          if (block.type === "tool_use") parts.push(toolCallView(block));
        }
        return parts;
      }
      case "pre_acting":
        return [toolCallView(ev.tool_call)];
      case "acting_chunk":
        return [line(`${ev.tool_name || ev.tool_call_id}: ${brief(ev.chunk, 200)}`, "progress")];
      case "post_acting": {
        const result = ev.result || {};
        if (result.is_error) row.classList.add("is-error");
        return [
          line(`${ev.tool_call.name} ran ${millis(ev.duration_ms)}`, "duration"),
          h("pre", {
            class: result.is_error ? "tool-result error-result" : "tool-result",
            text: brief(outputText(result.output), 600),
          }),
        ];
      }
      case "post_call": {
        const result = ev.result || {};
        if (result.stop_reason === "interrupted") row.classList.add("is-flagged");
        else if (result.error || result.ok === false) row.classList.add("is-error");
        const parts = [
          line(`stop: ${result.stop_reason} · ${plural(result.steps ?? ev.step, "step")}`),
          line(`run total: ${usageText(result.usage)}`, "usage run-total"),
        ];
        if (result.error) parts.push(line(`${result.error.code}: ${result.error.message}`, "err"));
        if (result.pending_approvals && result.pending_approvals.length) {
          parts.push(line(`waiting for approval: ${result.pending_approvals.join(", ")}`));
        }
        return parts;
      }
      case "error":
        row.classList.add("is-error");
        return [
          line(`${ev.code} from ${ev.source}${ev.recoverable ? " (recoverable)" : ""}`),
          line(ev.message, "err"),
        ];
      case "interrupted":
        return [line(`at ${ev.checkpoint}${ev.reason ? `: ${ev.reason}` : ""}`)];
      case "context_trimmed":
        return [
          line(
            `${(ev.dropped || []).length} dropped · ${(ev.truncated || []).length} truncated · ` +
              `${(ev.summarized || []).length} summarized (${ev.strategy})`,
          ),
          line(`tokens ${ev.tokens_before} → ${ev.tokens_after} (budget ${ev.budget})`),
        ];
      case "retry":
        return [
          line(`attempt ${ev.attempt} in ${seconds(ev.delay_s)} after ${ev.code}`),
          line(ev.message, "err"),
        ];
      case "approval_requested":
        return [
          toolCallView(ev.tool_call),
          ev.reason ? line(ev.reason) : null,
          this.approvalActions(ev),
        ];
      case "guard":
        if (ev.action !== "pass") row.classList.add("is-flagged");
        return [
          line(`${ev.stage} → ${ev.action} on ${ev.target} (score ${ev.verdict.score.toFixed(2)})`),
          ev.verdict.reasons.length ? line(ev.verdict.reasons.join(", ")) : null,
        ];
      case "fallback":
        return [
          line(`${ev.from_model} → ${ev.to_model} after ${ev.code}`),
          line(ev.message, "err"),
        ];
      case "retrieval":
        return [
          line(`“${brief(ev.query, 100)}”: ${(ev.hits || []).length} hits · ${ev.tokens} tokens`),
          h(
            "ol",
            { class: "hits" },
            (ev.hits || []).map((hit) =>
              h("li", {
                text:
                  `${hit.metadata?.source ?? hit.id} (${hit.score.toFixed(3)}): ` +
                  brief(hit.text, 120),
              }),
            ),
          ),
        ];
      case "handoff":
        return [line(`${ev.from_agent} → ${ev.to_agent}${ev.reason ? `: ${ev.reason}` : ""}`)];
      case "custom":
        return [line(`${ev.name}: ${brief(ev.data, 200)}`)];
      default:
        return [];
    }
  }

  approvalActions(ev) {
    const reason = h("input", {
      type: "text",
      class: "reject-reason",
      placeholder: "reason (optional)",
      "aria-label": `Reason for rejecting ${ev.tool_call.name}`,
    });
    const decide = (approved) => (event) => {
      event.stopPropagation();
      for (const button of box.querySelectorAll("button")) button.disabled = true;
      this.onDecide(ev, approved, reason.value.trim() || null);
    };
    const box = h(
      "div",
      { class: "approval-actions", data: { approvalId: ev.approval_id } },
      h("button", {
        type: "button",
        class: "approve",
        data: { approvalId: ev.approval_id },
        text: "Approve",
        on: { click: decide(true) },
      }),
      h("button", {
        type: "button",
        class: "reject",
        data: { approvalId: ev.approval_id },
        text: "Reject",
        on: { click: decide(false) },
      }),
      reason,
    );
    return box;
  }

  /** Note a pre_reasoning's time before the row is built, for its post_reasoning's duration. */
  note(ev) {
    if (ev.type === "pre_reasoning")
      this.reasoningStarts.set(`${ev.run_id}:${ev.step}`, ev.timestamp);
  }

  /** Re-enable the approval buttons of `approvalId` (the decision failed). */
  undecided(approvalId) {
    for (const button of this.list.querySelectorAll(`.approval-actions button`)) {
      if (button.dataset.approvalId === approvalId) button.disabled = false;
    }
  }
}

function line(text, cls = "") {
  return h("div", { class: `line ${cls}`.trim(), text });
}

function deltaText(delta) {
  if (!delta) return "";
  if (delta.type === "text_delta") return delta.text;
  if (delta.type === "thinking_delta") return `(thinking) ${delta.text}`;
  if (delta.type === "tool_call_delta") {
    return `(tool call${delta.name ? ` ${delta.name}` : ""}) ${delta.args || ""}`;
  }
  return brief(delta);
}

function toolCallView(call) {
  return h(
    "div",
    { class: "tool-call" },
    h("span", { class: "tool-name", text: call.name }),
    h("code", { class: "tool-args", text: brief(call.input, 300) }),
  );
}

/** A one-line description of the event, shown next to its type. */
function summarize(ev) {
  switch (ev.type) {
    case "pre_call":
      return `${ev.agent} starts`;
    case "post_reasoning": {
      const calls = (Array.isArray(ev.response?.content) ? ev.response.content : []).filter(
        (b) => b.type === "tool_use",
      );
      const text = msgText(ev.response);
      return calls.length ? `calls ${calls.map((c) => c.name).join(", ")}` : brief(text, 60);
    }
    case "pre_acting":
    case "post_acting":
      return ev.tool_call.name;
    case "approval_requested":
      return `${ev.tool_call.name} waits for approval`;
    case "post_call":
      return ev.result ? ev.result.stop_reason : "";
    case "error":
      return ev.code;
    case "reasoning_chunk":
      return ev.delta ? ev.delta.type : "";
    default:
      return "";
  }
}

/** The hooks that changed `ev`, each recorded change a diff (rendered when first opened). */
function changesView(ev) {
  const summary = h("summary", {
    class: "changes-summary",
    text: `modified by ${ev.modified_by.join(", ")}`,
  });
  const box = h("details", { class: "changes" }, summary);
  const changes = ev.changes || [];
  if (!changes.length) {
    box.append(
      h("p", {
        class: "no-changes",
        text: "The server does not record changes (record_changes is off), so there is no diff.",
      }),
    );
    return box;
  }
  const views = changes.map((change, i) => {
    const view = h(
      "div",
      { class: "change", data: { hook: change.by, field: change.field } },
      h("div", { class: "change-head", text: `${change.by} changed ${change.field}` }),
    );
    view.render = () => {
      const next = changes.slice(i + 1).find((c) => c.field === change.field);
      const after = next ? next.before : ev[change.field];
      const diff = renderJsonDiff(change.before, after);
      view.firstChild.textContent += ` (+${diff.added} −${diff.removed} lines)`;
      view.append(diff.element);
    };
    return view;
  });
  box.append(...views);
  box.addEventListener("toggle", () => {
    if (!box.open) return;
    for (const view of views) {
      if (view.render) {
        view.render();
        view.render = null;
      }
    }
  });
  return box;
}
