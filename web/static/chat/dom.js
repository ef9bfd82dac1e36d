// A tiny element builder: text always goes in as text nodes, never as HTML, so nothing a CLI
// or a page says can inject markup into the panel.

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
}

const SVG = "http://www.w3.org/2000/svg";

/** An icon drawn in SVG (an icon font may lack a glyph, an SVG never does): `shapes` are
    [tag, attributes] pairs inside a 24×24 box; `look` sets fill and stroke. */
export function icon(shapes, look) {
  const svg = document.createElementNS(SVG, "svg");
  for (const [name, value] of Object.entries({ viewBox: "0 0 24 24", "aria-hidden": "true", ...look })) {
    svg.setAttribute(name, value);
  }
  for (const [tag, attributes] of shapes) {
    const shape = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes)) shape.setAttribute(name, value);
    svg.append(shape);
  }
  return svg;
}
