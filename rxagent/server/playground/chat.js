// The chat: the user's messages, the assistant's text and thinking as they stream, tool calls
// and results in brief, and the saved messages of an opened session.

import { brief, h, msgText, outputText, plural } from "./util.js";

export class Chat {
  constructor(list) {
    this.list = list;
    this.bubble = null;
  }

  clear() {
    this.list.replaceChildren();
    this.bubble = null;
  }

  scroll() {
    this.list.scrollTop = this.list.scrollHeight;
  }

  user(text) {
    this.list.append(
      h(
        "li",
        { class: "msg msg-user" },
        h("div", { class: "who", text: "you" }),
        h("div", { class: "text", text }),
      ),
    );
    this.bubble = null;
    this.scroll();
  }

  note(text, cls = "") {
    this.list.append(h("li", { class: `msg msg-note ${cls}`.trim(), text }));
    this.scroll();
  }

  /** A new assistant message that streams: thinking (folded once done) and text. */
  assistant(agent) {
    const thinking = h(
      "details",
      { class: "thinking", hidden: true, open: true },
      h("summary", { text: "thinking" }),
      h("div", { class: "thinking-text" }),
    );
    const text = h("div", { class: "text" });
    const tools = h("div", { class: "tools" });
    const element = h(
      "li",
      { class: "msg msg-assistant streaming" },
      h("div", { class: "who", text: agent }),
      thinking,
      text,
      tools,
    );
    this.list.append(element);
    this.bubble = { element, thinking, text, tools, textNode: null, thinkingNode: null };
    return this.bubble;
  }

  /** Follow one event of a run (nested runs' events are left to the timeline). */
  event(ev) {
    const nested = ev.path && ev.path.length > 1;
    if (nested) {
      if (ev.type === "pre_call") this.note(`${ev.path.join(" › ")} is working…`, "nested");
      return;
    }
    switch (ev.type) {
      case "pre_reasoning":
        this.assistant(ev.agent);
        break;
      case "reasoning_chunk":
        this.chunk(ev);
        break;
      case "post_reasoning":
        this.response(ev);
        break;
      case "post_acting": {
        const result = ev.result || {};
        this.note(
          `${ev.tool_call.name} → ${brief(outputText(result.output), 160)}`,
          result.is_error ? "tool-note error-result" : "tool-note",
        );
        break;
      }
      case "approval_requested":
        this.note(
          `${ev.tool_call.name}(${brief(ev.tool_call.input, 120)}) waits for your approval: ` +
            "see the timeline.",
          "approval-note",
        );
        break;
      case "interrupted":
        this.settle();
        this.note(
          `Interrupted at ${ev.checkpoint}${ev.reason ? `: ${ev.reason}` : "."}`,
          "interrupt-note",
        );
        break;
      case "error":
        this.note(`${ev.code}: ${ev.message}`, "error-result");
        break;
      case "post_call":
        this.settle();
        this.final(ev);
        break;
      default:
        break;
    }
    this.scroll();
  }

  chunk(ev) {
    const bubble = this.bubble || this.assistant(ev.agent);
    const delta = ev.delta || {};
    if (delta.type === "text_delta") {
      if (!bubble.textNode) bubble.textNode = bubble.text.appendChild(document.createTextNode(""));
      bubble.textNode.appendData(delta.text);
    } else if (delta.type === "thinking_delta") {
      bubble.thinking.hidden = false;
      if (!bubble.thinkingNode) {
        bubble.thinkingNode = bubble.thinking.lastChild.appendChild(document.createTextNode(""));
      }
      bubble.thinkingNode.appendData(delta.text);
    }
  }

  /** End a streaming message that got no response (an interrupted or failed model call). */
  settle() {
    const bubble = this.bubble;
    if (!bubble) return;
    bubble.element.classList.remove("streaming");
    bubble.thinking.open = false;
    if (!bubble.text.textContent && bubble.thinking.hidden) bubble.element.remove();
    this.bubble = null;
  }

  response(ev) {
    const bubble = this.bubble || this.assistant(ev.agent);
    const response = ev.response || {};
    bubble.text.textContent = msgText(response);
    bubble.textNode = null;
    const blocks = Array.isArray(response.content) ? response.content : [];
    const thinking = blocks
      .filter((b) => b.type === "thinking")
      .map((b) => b.thinking)
      .join("\n");
    if (thinking) {
      bubble.thinking.hidden = false;
      bubble.thinking.lastChild.textContent = thinking;
      bubble.thinkingNode = null;
    }
    bubble.thinking.open = false;
    for (const call of blocks.filter((b) => b.type === "tool_use")) {
      bubble.tools.append(
        h("code", { class: "call", text: `${call.name}(${brief(call.input, 100)})` }),
      );
    }
    bubble.element.classList.remove("streaming");
    if (!bubble.text.textContent && !thinking && !bubble.tools.childElementCount)
      bubble.element.remove();
    this.bubble = null;
  }

  final(ev) {
    const reply = msgText(ev.reply);
    const last = [...this.list.querySelectorAll(".msg-assistant")].pop();
    if (
      last &&
      last.querySelector(".text").textContent === reply &&
      !last.classList.contains("final")
    ) {
      last.classList.add("final");
    } else if (reply) {
      const bubble = this.assistant(ev.agent);
      bubble.text.textContent = reply;
      bubble.element.classList.remove("streaming");
      bubble.element.classList.add("final");
      this.bubble = null;
    }
    const result = ev.result || {};
    if (result.pending_approvals && result.pending_approvals.length) {
      this.note(
        `The run is parked: ` +
          `${plural(result.pending_approvals.length, "call waits", "calls wait")} for approval.`,
        "approval-note",
      );
    }
  }

  /** Show a saved session's messages (its memory). */
  history(memory, agent) {
    this.clear();
    for (const msg of memory || []) {
      if (msg.role === "user") this.user(msgText(msg));
      else if (msg.role === "assistant") {
        const bubble = this.assistant(agent || "assistant");
        bubble.element.classList.remove("streaming");
        bubble.text.textContent = msgText(msg);
        for (const block of Array.isArray(msg.content) ? msg.content : []) {
          if (block.type === "tool_use") {
            bubble.tools.append(
              h("code", { class: "call", text: `${block.name}(${brief(block.input, 100)})` }),
            );
          }
        }
        this.bubble = null;
      } else if (msg.role === "tool") {
        for (const block of Array.isArray(msg.content) ? msg.content : []) {
          if (block.type === "tool_result") {
            this.note(
              `${block.name} → ${brief(outputText(block.output), 160)}`,
              block.is_error ? "tool-note error-result" : "tool-note",
            );
          }
        }
      } else if (msg.role === "system") {
        this.note(`system: ${brief(msgText(msg), 160)}`);
      }
    }
  }
}
