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
