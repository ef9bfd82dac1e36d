// A screenshot of the page, then a preview where the person drags out the area to send. Only
// that crop leaves the page (as its own PNG); cancelling leaves the draft untouched. The image
// comes from the browser's own tab capture (getDisplayMedia, asking for the current tab), with
// the panel hidden while it is taken; the permission is never remembered by the panel.

import { el } from "./dom.js";

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

/** A canvas holding the visible page. `hide(true|false)` hides the panel around the capture. */
export async function capturePage(hide) {
  if (!navigator.mediaDevices?.getDisplayMedia) throw new Error("this browser cannot capture the page");
  hide(true);
  let stream;
  try {
    await nextFrame();
    await nextFrame(); // the panel's disappearance is painted before the capture starts
    stream = await navigator.mediaDevices.getDisplayMedia({
      video: { displaySurface: "browser" }, audio: false,
      preferCurrentTab: true, selfBrowserSurface: "include", surfaceSwitching: "exclude",
    });
    const video = el("video", { muted: true, playsinline: true });
    video.srcObject = stream;
    await video.play(); // resolves once a frame is there; a tab that does not change sends no more
    if (!video.videoWidth) await new Promise((resolve) => video.addEventListener("resize", resolve, { once: true }));
    const canvas = el("canvas", { width: video.videoWidth, height: video.videoHeight });
    canvas.getContext("2d").drawImage(video, 0, 0);
    return canvas;
  } finally {
    stream?.getTracks().forEach((track) => track.stop());
    hide(false);
  }
}

/**
 * Shows the screenshot in `layer` and resolves with the chosen crop
 * ({dataURL, screenshot: {area, full, scroll}}), or null when cancelled.
 */
export function chooseArea(layer, canvas) {
  const full = { width: window.innerWidth, height: window.innerHeight };
  const scroll = { x: Math.round(window.scrollX), y: Math.round(window.scrollY) };
  const scale = canvas.width / full.width; // image pixels per CSS pixel
  return new Promise((resolve) => {
    const image = el("img", { class: "shot", src: canvas.toDataURL("image/png"), alt: "Screenshot of the page", draggable: "false" });
    const box = el("div", { class: "selection", hidden: true });
    const stage = el("div", { class: "stage" }, image, box);
    const attach = el("button", { type: "button", class: "allow", disabled: true, title: "Drag out an area of the screenshot first" },
    "Attach area");
    const done = (value) => {
      layer.hidden = true;
      layer.replaceChildren();
      resolve(value);
    };
    let area = null; // in CSS pixels of the page
    let origin = null;
    const toPage = (event) => {
      const rect = image.getBoundingClientRect();
      const x = Math.min(Math.max(event.clientX - rect.left, 0), rect.width);
      const y = Math.min(Math.max(event.clientY - rect.top, 0), rect.height);
      return { x: (x / rect.width) * full.width, y: (y / rect.height) * full.height, rect };
    };
    stage.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      stage.setPointerCapture(event.pointerId);
      origin = toPage(event);
    });
    stage.addEventListener("pointermove", (event) => {
      if (!origin) return;
      const at = toPage(event);
      const x = Math.min(origin.x, at.x), y = Math.min(origin.y, at.y);
      area = { x: Math.round(x), y: Math.round(y), width: Math.round(Math.abs(at.x - origin.x)),
               height: Math.round(Math.abs(at.y - origin.y)) };
      const k = at.rect.width / full.width;
      Object.assign(box.style, { left: `${area.x * k}px`, top: `${area.y * k}px`,
                                 width: `${area.width * k}px`, height: `${area.height * k}px` });
      box.hidden = false;
      attach.disabled = area.width < 4 || area.height < 4;
      attach.title = attach.disabled ? "Drag out a larger area" : "Attach the area you dragged out";
    });
    stage.addEventListener("pointerup", () => {
      origin = null;
    });
    attach.addEventListener("click", () => done(crop(canvas, area, scale, full, scroll)));
    layer.replaceChildren(el("div", { class: "preview", role: "dialog", "aria-label": "Choose an area of the screenshot" },
      el("div", { class: "preview-head" }, "Drag to choose the area to send"),
      stage,
      el("div", { class: "buttons" },
        el("button", { type: "button", class: "plain", title: "Send nothing: the draft stays as it was", onclick: () => done(null) },
          "Cancel"),
        el("button", { type: "button", class: "plain", title: "Attach the whole visible page",
                       onclick: () => done(crop(canvas, { x: 0, y: 0, ...full }, scale, full, scroll)) }, "Whole page"),
        attach)));
    layer.hidden = false;
  });
}

function crop(canvas, area, scale, full, scroll) {
  const out = el("canvas", { width: Math.max(1, Math.round(area.width * scale)),
                             height: Math.max(1, Math.round(area.height * scale)) });
  out.getContext("2d").drawImage(canvas, area.x * scale, area.y * scale, area.width * scale, area.height * scale,
                                 0, 0, out.width, out.height);
  return { dataURL: out.toDataURL("image/png"), screenshot: { area, full, scroll } };
}
