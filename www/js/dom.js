// One helper to build elements. Text always goes through textContent (server and file text is
// untrusted, contract §9); there is deliberately no way to set innerHTML here.
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child);
  }
  return node;
}

export const $ = (id) => document.getElementById(id);

/** Shows one line of text in `node` with a class (ok, error, notice), or clears it. */
export function say(node, text, kind = "") {
  node.textContent = text ?? "";
  node.className = kind;
  node.hidden = !text;
}

/** The protocol detail in a message (a browser's `TypeError: Failed to fetch`, a JSON-RPC error
 *  code), in parentheses: folded away, not shown in the line a chemist reads. */
const PROTOCOL_DETAIL = /\s*\(([^()]*(?:TypeError|NetworkError|Failed to fetch|JSON-RPC|-326\d\d)[^()]*)\)/g;

/** `text` split into the plain line and the protocol detail taken out of it ("" when none). */
export function fold(text) {
  const details = [];
  const plain = String(text ?? "").replace(PROTOCOL_DETAIL, (_, inner) => { details.push(inner.trim()); return " "; });
  if (details.length === 0) return { plain: String(text ?? ""), detail: "" };
  return { plain: plain.replace(/\s+([.,;:?!])(\s|$)/g, "$1$2").replace(/\s{2,}/g, " ").trim(), detail: details.join("; ") };
}

/** A folded "Details" disclosure holding `detail`, or null when there is none. */
export function details(detail, summary = "Details") {
  if (!detail) return null;
  return el("details", { class: "more" }, el("summary", { text: summary }), el("span", { text: ` ${detail}` }));
}

/** As `say`, with the protocol detail of `text` folded into a "Details" disclosure. */
export function sayFolded(node, text, kind = "") {
  const { plain, detail } = fold(text);
  node.replaceChildren(document.createTextNode(plain));
  const more = details(detail);
  if (more) node.append(" ", more);
  node.className = kind;
  node.hidden = !text;
}
