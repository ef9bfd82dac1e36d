// What a framework's dev build left on a DOM element about where it came from: the framework,
// the source position where the element itself is created (its JSX or template line) and the
// chain of components around it, innermost first. Read synchronously from the DOM and the
// framework's own debug fields; no request (positions in served modules are mapped back to
// files by devhostd: POST /__devhost__/page/locate).
//
// A position is {file, line, column?} (file as the dev build names it: absolute, or relative
// to the dev server's root) or {url, line, column} (a served module's URL as an Error stack
// prints it, line and column 1-based). Columns here are 1-based throughout.
//
// What each dev build leaves, as seen in Chromium on the apps of tests/vite_apps.py (Vite 8.4,
// the versions pinned in tests/peers.sh):
// - React (react-dom 18 and 19, JSX compiled by @vitejs/plugin-react 6, oxc): each host element
//   carries its fiber under an own "__reactFiber$<random>" key. Fibers link up by `return`;
//   `_debugOwner` is the fiber of the component whose render created it (or its alternate).
//   React 18 keeps `_debugSource {fileName (absolute), lineNumber, columnNumber (1-based)}` on
//   every fiber: the JSX line itself. React 19 dropped it; it keeps `_debugStack`, an Error made
//   inside jsxDEV: "Error: react-stack-top-frame", a frame in the JSX runtime's module
//   (/node_modules/.vite/deps/react_jsx-dev-runtime.js), then the frame of the JSX call in the
//   served module ("at Cart (http://…/src/Cart.jsx:29:20)": the served line, not the file's),
//   which is the element's own creation site.
// - Vue 3 (@vitejs/plugin-vue 6): every element a component rendered has a non-enumerable
//   `__vueParentComponent` (the instance; `.parent` up to the root) and `__vnode`, which holds
//   no position. A component's `type` has `__file` (absolute) and `__name` (from <script setup>)
//   or `name`. Nothing in the dev build names an element's template line, so the source is the
//   component's file alone ({file}, no line).
// - Svelte 5 (@sveltejs/vite-plugin-svelte 7): each element has an own `__svelte_meta`:
//   `loc {file (relative to the root), line (1-based), column (0-based)}` of the element's tag and
//   `parent`, a chain of blocks ("each", "if", …) and component uses: `{type: "component",
//   componentTag: "Cart", file, line, column}` is where Cart is used in its parent's file. The
//   root component (mounted by mount()) has no entry; its name is its file's.

const NONE = () => ({ framework: null, source: null, components: [] });
const MAX_DEPTH = 200; // ancestors looked through for a framework's element, and fibers walked

export function frameworkInfo(element) {
  try {
    for (let node = element, depth = 0; node && depth < MAX_DEPTH; node = parentOf(node), depth += 1) {
      const info = react(node) || vue(node) || svelte(node);
      if (info) {
        // An element the framework did not render itself (one a script added inside the app)
        // still gets the components around it, but no source of its own.
        if (node !== element) info.source = null;
        return info;
      }
    }
  } catch {
    // Debug fields are no API: whatever they turn out to be, the page and the picker go on.
  }
  return NONE();
}

function parentOf(node) {
  return node.parentElement || node.parentNode?.host || null;
}

function basename(file) {
  return String(file).split(/[\\/]/).pop().replace(/\.[^.]*$/, "");
}

function positive(n) {
  return Number.isInteger(n) && n > 0;
}

// ---- React ----------------------------------------------------------------------------------

// Fiber tags (react-reconciler's ReactWorkTags) of the components a person writes; every other
// tag (host elements and text, the root, Fragment, Mode (StrictMode), Profiler, Suspense,
// context providers and consumers, Lazy, Offscreen, …) is the framework's own.
const COMPONENT_TAGS = new Set([0 /* function */, 1 /* class */, 11 /* forwardRef */, 14 /* memo */, 15 /* simple memo */]);

function react(node) {
  const key = Object.keys(node).find((name) => name.startsWith("__reactFiber$"));
  const fiber = key && node[key];
  if (!fiber || typeof fiber !== "object") return null;
  const path = []; // the fibers from the element's up to the root
  for (let f = fiber, n = 0; f && n < MAX_DEPTH; f = f.return, n += 1) path.push(f);
  const components = [];
  path.forEach((f, index) => {
    if (!COMPONENT_TAGS.has(f.tag)) return;
    // The component's place: the outermost element on the path that its own render created,
    // i.e. where its JSX begins in its own file.
    let position = null;
    for (let i = index - 1; i >= 0 && !position; i -= 1) {
      const owner = path[i]._debugOwner;
      if (owner && (owner === f || owner === f.alternate)) position = reactPosition(path[i]);
    }
    components.push({ name: componentName(f) || "Anonymous", ...(position || {}) });
  });
  return { framework: "react", source: reactPosition(fiber), components };
}

function componentName(fiber) {
  const type = fiber.type;
  if (!type) return null;
  if (typeof type === "function") return type.displayName || type.name || null;
  // forwardRef and memo wrappers: the function inside names it
  const inner = type.render || type.type;
  return type.displayName || (inner && (inner.displayName || inner.name)) || null;
}

function reactPosition(fiber) {
  const source = fiber._debugSource; // React 18
  if (source && typeof source.fileName === "string" && positive(source.lineNumber)) {
    return { file: source.fileName, line: source.lineNumber, ...(positive(source.columnNumber) ? { column: source.columnNumber } : {}) };
  }
  const stack = fiber._debugStack; // React 19: an Error (or, in some builds, its stack text)
  const text = typeof stack === "string" ? stack : stack && typeof stack.stack === "string" ? stack.stack : "";
  return text ? creationFrame(text) : null;
}

// Chrome's "    at fn (url:line:col)" / "    at url:line:col", and Firefox's "fn@url:line:col".
const FRAME = /(?:\(|@|\bat )([a-z][\w+.-]*:\/\/[^\s()]+?):(\d+):(\d+)\)?\s*$/i;

// The first frame outside the JSX runtime: the frames before it are jsxDEV's own module.
export function creationFrame(stack) {
  const frames = [];
  for (const line of String(stack).split("\n")) {
    const match = FRAME.exec(line);
    if (match) frames.push({ url: match[1], line: Number(match[2]), column: Number(match[3]) });
  }
  const runtime = frames[0]?.url;
  const frame = frames.find((f) => f.url !== runtime);
  return frame && positive(frame.line) ? frame : null;
}

// ---- Vue ------------------------------------------------------------------------------------

// Vue's built-in components, which wrap a person's without being theirs.
const VUE_BUILTINS = new Set(["BaseTransition", "Transition", "TransitionGroup", "KeepAlive", "Suspense", "Teleport"]);

function vue(node) {
  const instance = node.__vueParentComponent;
  if (!instance || typeof instance !== "object" || !instance.type) return null;
  const components = [];
  for (let c = instance, n = 0; c && n < MAX_DEPTH; c = c.parent, n += 1) {
    const type = c.type || {};
    const file = typeof type.__file === "string" ? type.__file : null;
    const name = type.__name || type.name || (file && basename(file)) || "Anonymous";
    if (VUE_BUILTINS.has(name) && !file) continue;
    components.push({ name, ...(file ? { file } : {}) });
  }
  const own = components.find((c) => c.file);
  return { framework: "vue", source: own ? { file: own.file } : null, components };
}

// ---- Svelte ---------------------------------------------------------------------------------

function svelte(node) {
  const meta = Object.prototype.hasOwnProperty.call(node, "__svelte_meta") ? node.__svelte_meta : null;
  if (!meta || typeof meta !== "object" || !meta.loc) return null;
  // The component uses around the element, innermost first (each's and if's blocks skipped).
  const uses = [];
  for (let p = owner(meta), n = 0; n < MAX_DEPTH; p = p && owner(p), n += 1) {
    uses.push(p); // null: the root component
    if (!p) break;
  }
  // Each component's file is the one its inner component's use (or the element) is in; its
  // line, the outermost of its own elements around the element (where its markup begins).
  const components = uses.map((use, i) => {
    const file = i === 0 ? meta.loc.file : uses[i - 1].file;
    const name = use ? use.componentTag || basename(file) : basename(file);
    return { use, name, file, position: null };
  });
  for (let el = node, n = 0; el && n < MAX_DEPTH; el = parentOf(el), n += 1) {
    const m = Object.prototype.hasOwnProperty.call(el, "__svelte_meta") ? el.__svelte_meta : null;
    const component = m?.loc && components.find((c) => c.use === owner(m));
    if (component) component.position = sveltePosition(m.loc) || component.position;
  }
  return {
    framework: "svelte",
    source: sveltePosition(meta.loc),
    components: components.map((c) => ({ name: c.name, ...(c.position || { file: c.file }) })),
  };
}

function owner(meta) {
  for (let p = meta.parent, n = 0; p && n < MAX_DEPTH; p = p.parent, n += 1) {
    if (p.type === "component") return p;
  }
  return null;
}

function sveltePosition(loc) {
  if (typeof loc.file !== "string" || !positive(loc.line)) return null;
  return { file: loc.file, line: loc.line, ...(Number.isInteger(loc.column) ? { column: loc.column + 1 } : {}) };
}
