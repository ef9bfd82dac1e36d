// Dragging the panel by its header. The position is saved by devhostd (per manifest, so every
// routed hostname of the stack shares it: browser storage is separate for each hostname).

const VISIBLE = 48; // px of the panel that stay on screen whatever the saved position says

export function clampPosition(position, width, height) {
  const maxLeft = Math.max(0, window.innerWidth - VISIBLE);
  const maxTop = Math.max(0, window.innerHeight - VISIBLE);
  return {
    left: Math.round(Math.min(Math.max(position.left, VISIBLE - width), maxLeft)),
    top: Math.round(Math.min(Math.max(position.top, 0), maxTop)),
  };
}

export function makeDraggable(panel, handle, onDropped) {
  let start = null;
  handle.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || event.target.closest("button, select, input, a")) return;
    const rect = panel.getBoundingClientRect();
    start = { x: event.clientX, y: event.clientY, left: rect.left, top: rect.top, moved: false };
    handle.setPointerCapture(event.pointerId);
  });
  handle.addEventListener("pointermove", (event) => {
    if (!start) return;
    const dx = event.clientX - start.x, dy = event.clientY - start.y;
    if (!start.moved && Math.hypot(dx, dy) < 3) return; // a click, not a drag
    start.moved = true;
    const rect = panel.getBoundingClientRect();
    const { left, top } = clampPosition({ left: start.left + dx, top: start.top + dy }, rect.width, rect.height);
    Object.assign(panel.style, { left: `${left}px`, top: `${top}px`, right: "auto", bottom: "auto" });
  });
  const end = () => {
    if (!start) return;
    const moved = start.moved;
    start = null;
    if (moved) onDropped({ left: parseFloat(panel.style.left), top: parseFloat(panel.style.top) });
  };
  handle.addEventListener("pointerup", end);
  handle.addEventListener("pointercancel", end);
}
