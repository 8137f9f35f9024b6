// A line diff (longest common subsequence after trimming the common head and tail) and its
// rendering as added / removed / unchanged lines, long unchanged runs folded.

import { h, pretty } from "./util.js";

const MAX_CELLS = 4_000_000;
const CONTEXT = 3;

/**
 * Diff two lists of lines: [{op: " " | "-" | "+", line}], in order.
 * Above MAX_CELLS of LCS table the middle is shown as removed-then-added.
 */
export function lineDiff(a, b) {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail += 1;
  }
  const out = a.slice(0, head).map((line) => ({ op: " ", line }));
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  out.push(...middle(x, y));
  out.push(...a.slice(a.length - tail).map((line) => ({ op: " ", line })));
  return out;
}

function middle(x, y) {
  const n = x.length;
  const m = y.length;
  if (n === 0 || m === 0 || (n + 1) * (m + 1) > MAX_CELLS) {
    return [...x.map((line) => ({ op: "-", line })), ...y.map((line) => ({ op: "+", line }))];
  }
  // lengths[i][j]: LCS of x[i:] and y[j:], one flat array
  const width = m + 1;
  const lengths = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lengths[i * width + j] =
        x[i] === y[j]
          ? lengths[(i + 1) * width + j + 1] + 1
          : Math.max(lengths[(i + 1) * width + j], lengths[i * width + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ op: " ", line: x[i] });
      i += 1;
      j += 1;
    } else if (lengths[(i + 1) * width + j] >= lengths[i * width + j + 1]) {
      out.push({ op: "-", line: x[i] });
      i += 1;
    } else {
      out.push({ op: "+", line: y[j] });
      j += 1;
    }
  }
  while (i < n) out.push({ op: "-", line: x[i++] });
  while (j < m) out.push({ op: "+", line: y[j++] });
  return out;
}

/** Counts of added and removed lines. */
export function diffStats(ops) {
  let added = 0;
  let removed = 0;
  for (const { op } of ops) {
    if (op === "+") added += 1;
    else if (op === "-") removed += 1;
  }
  return { added, removed };
}

/** A <pre class="diff"> of two JSON values, pretty-printed; unchanged runs folded. */
export function renderJsonDiff(before, after) {
  const ops = lineDiff(pretty(before).split("\n"), pretty(after).split("\n"));
  const { added, removed } = diffStats(ops);
  const pre = h("pre", { class: "diff" });
  let k = 0;
  while (k < ops.length) {
    if (ops[k].op !== " ") {
      const cls = ops[k].op === "+" ? "diff-add" : "diff-del";
      pre.append(h("span", { class: `diff-line ${cls}`, text: `${ops[k].op} ${ops[k].line}` }));
      k += 1;
      continue;
    }
    let end = k;
    while (end < ops.length && ops[end].op === " ") end += 1;
    const run = ops.slice(k, end);
    const keepHead = k === 0 ? 0 : CONTEXT;
    const keepTail = end === ops.length ? 0 : CONTEXT;
    if (run.length > keepHead + keepTail + 1) {
      for (const { line } of run.slice(0, keepHead)) pre.append(same(line));
      const hidden = run.length - keepHead - keepTail;
      pre.append(
        h("span", { class: "diff-line diff-fold", text: `  … ${hidden} unchanged lines` }),
      );
      for (const { line } of run.slice(run.length - keepTail)) pre.append(same(line));
    } else {
      for (const { line } of run) pre.append(same(line));
    }
    k = end;
  }
  return { element: pre, added, removed };
}

function same(line) {
  return h("span", { class: "diff-line diff-same", text: `  ${line}` });
}
