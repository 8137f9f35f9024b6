// Small DOM and formatting helpers shared by the playground's modules.

/**
 * Create an element: h("li", {class: "event", data: {seq: 3}, text: "hi"}, child, ...).
 * Text always goes in as text (never parsed as HTML).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = String(value);
    else if (key === "data") {
      for (const [name, v] of Object.entries(value)) {
        if (v !== undefined && v !== null) el.dataset[name] = String(v);
      }
    } else if (key === "on") {
      for (const [name, fn] of Object.entries(value)) el.addEventListener(name, fn);
    } else if (key === "hidden") el.hidden = Boolean(value);
    else if (key === "open") el.open = Boolean(value);
    else if (key === "disabled") el.disabled = Boolean(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Pretty JSON (2 spaces); `undefined` as "undefined". */
export function pretty(value) {
  const text = JSON.stringify(value, null, 2);
  return text === undefined ? "undefined" : text;
}

/** Compact JSON on one line, cut to `max` characters. */
export function brief(value, max = 120) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) return "";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** "1 step", "3 steps": a count and its noun, plural unless the count is 1. */
export function plural(count, noun, many = `${noun}s`) {
  return `${count} ${count === 1 ? noun : many}`;
}

export function seconds(s) {
  if (!Number.isFinite(s)) return "";
  return s < 10 ? `${s.toFixed(3)} s` : `${s.toFixed(1)} s`;
}

export function millis(ms) {
  if (!Number.isFinite(ms)) return "";
  return ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function cost(value) {
  const n = Number(value || 0);
  return `$${n < 0.01 ? n.toFixed(4) : n.toFixed(2)}`;
}

/** "76 in · 94 out · $0.0000" for a Usage JSON. */
export function usageText(usage) {
  if (!usage) return "";
  const parts = [`${usage.input_tokens ?? 0} in`, `${usage.output_tokens ?? 0} out`];
  if (usage.cache_read_tokens) parts.push(`${usage.cache_read_tokens} cached`);
  parts.push(cost(usage.cost));
  return parts.join(" · ");
}

/** The text of a Msg JSON: its string content, or its text blocks joined. */
export function msgText(msg) {
  if (!msg) return "";
  if (typeof msg.content === "string") return msg.content;
  return (msg.content || [])
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
}

/** The text of a tool result's output (a string or blocks). */
export function outputText(output) {
  if (typeof output === "string") return output;
  return (output || []).map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n");
}
