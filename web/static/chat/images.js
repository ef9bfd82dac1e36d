// An image is checked and fitted when it is added, not at Send: a 24 MB photo would otherwise
// sit in the tray only to be refused later. What the models take (Anthropic's API: at most 8000
// px a side and about 5 MB an image, and it scales anything with a long edge past 1568 px down
// to that before the model sees it) is what an image is fitted to here, on a canvas: drawn at a
// long edge of at most 1568 px, kept as PNG when that is small enough, else JPEG. devhostd
// itself takes PNG and JPEG only (web/commands.py), in one send frame of at most 8 MiB.
// Refused on add is only what cannot be made acceptable: not a PNG or JPEG, or unreadable.

export const TYPES = ["image/png", "image/jpeg"];
export const LONG_EDGE = 1568;
// Decoded bytes: as base64 (4/3 of it) under Anthropic's 5 MB an image, and two of them fit one
// 8 MiB send frame.
export const MAX_IMAGE_BYTES = 3.5 * 1024 * 1024;
const JPEG_QUALITIES = [0.9, 0.8, 0.65, 0.5];

export class ImageProblem extends Error {}

function readDataURL(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

function encode(canvas, type, quality) {
  return new Promise((resolve) => canvas.toBlob(resolve, type, quality));
}

export function megabytes(bytes) {
  return bytes < 1e6 ? `${Math.max(1, Math.round(bytes / 1e3))} KB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

/**
 * The image ``file`` as it will be sent: {dataURL, width, height, bytes, from?: {width, height,
 * bytes}} (``from``: it was scaled or re-encoded). Throws an ImageProblem saying, in full, why
 * it cannot be sent.
 */
export async function fitImage(file) {
  const name = file.name || "That image";
  if (!TYPES.includes(file.type)) throw new ImageProblem(`${name} is not a PNG or JPEG image; only those can be sent.`);
  let bitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    throw new ImageProblem(`${name} could not be read as an image: its data is damaged or is not really a `
      + `${file.type === "image/png" ? "PNG" : "JPEG"}. Save it again as PNG or JPEG and add it again.`);
  }
  const { width, height } = bitmap;
  if (Math.max(width, height) <= LONG_EDGE && file.size <= MAX_IMAGE_BYTES) {
    bitmap.close();
    return { dataURL: await readDataURL(file), width, height, bytes: file.size };
  }
  const scale = Math.min(1, LONG_EDGE / Math.max(width, height));
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.round(width * scale));
  canvas.height = Math.max(1, Math.round(height * scale));
  const context = canvas.getContext("2d");
  context.fillStyle = "#ffffff"; // JPEG has no transparency: what was transparent turns white, not black
  if (file.type === "image/jpeg") context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  let blob = file.type === "image/png" ? await encode(canvas, "image/png") : null;
  if (!blob || blob.size > MAX_IMAGE_BYTES) {
    context.globalCompositeOperation = "destination-over"; // a white ground under what is drawn
    context.fillRect(0, 0, canvas.width, canvas.height);
    for (const quality of JPEG_QUALITIES) {
      blob = await encode(canvas, "image/jpeg", quality);
      if (blob && blob.size <= MAX_IMAGE_BYTES) break;
    }
  }
  if (!blob || blob.size > MAX_IMAGE_BYTES) {
    throw new ImageProblem(`${name} (${width}×${height}, ${megabytes(file.size)}) could not be made smaller than `
      + `${megabytes(MAX_IMAGE_BYTES)} even as a ${canvas.width}×${canvas.height} JPEG; crop it or send a smaller one.`);
  }
  return { dataURL: await readDataURL(blob), width: canvas.width, height: canvas.height, bytes: blob.size,
           from: { width, height, bytes: file.size } };
}

/** What the tray says of an image: its caption and, when it was fitted, what it was. */
export function describe(attachment) {
  const size = attachment.width ? `${attachment.width}×${attachment.height}` : "";
  const { from } = attachment;
  const title = !size ? "" : from ? `Scaled down from ${from.width}×${from.height} (${megabytes(from.bytes)}) `
    + `to ${size} (${megabytes(attachment.bytes)}): what the models take` : `${size}, ${megabytes(attachment.bytes)}`;
  if (attachment.screenshot) {
    const { area } = attachment.screenshot;
    return { caption: `area ${area.width}×${area.height}${from ? " (scaled)" : ""}`, title };
  }
  return { caption: size ? `${size}${from ? " (scaled)" : ""}` : "image", title };
}
