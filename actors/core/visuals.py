"""Visuals: HTML pages an agent publishes in a chat. The rules a page must meet, the record kept
of it, and the bootstrap put into it. Plain functions; actors/visual_store.py keeps the pages.

A visual is ``{id, title, at, maxHeight, heights?, size, turnId?}``: ``heights`` are measured
``[width, height]`` pairs (CSS pixels) the panel sizes the frame by before the page reports its
own height; ``size`` is the stored page's bytes, bootstrap included.
"""
from __future__ import annotations

import math
import os
import re
import secrets
import shlex
import sys

from actors.core.cuts import units as _units
from actors.errors import ChatError

LIMITS = {"title": 200, "minHeight": 80, "maxHeight": 2000, "bytes": 16 * 1024 * 1024, "heights": 24}
MEASURE_WIDTHS = (320, 400, 480, 560, 640, 720, 800, 900, 1000, 1200)

# What the agent is told (the appended prompt), in words it can act on.
PAGE_RULES = ("A visual is one self-contained HTML document of at most 16 MiB. It is shown in a "
              "sandbox with no network: inline every script, style, image and font (inline SVG or a "
              "canvas draws best); relative paths, local files and web addresses do not load.")
LAYOUT_GUIDE = ("It is shown in the conversation, as wide as the reply column (about 360 px on a "
                "phone to 1200 px wide): keep its width fluid, give charts a fixed pixel height, and "
                "leave out an outer card or banner; the page's own height sizes its frame.")
THEME_GUIDE = ("Colors come from CSS variables the panel sets: --background, --foreground, --muted, "
               "--muted-foreground, --border, --primary, --accent, --chart-1 to --chart-6, "
               "--font-sans, --font-mono and more; use them, and the page matches the panel.")


def _program() -> str:
    """devhostd's own program: the checkout's bin/devhostd when it runs from one, else the script
    pip installed beside this interpreter (the agent's PATH may have neither)."""
    checkout = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "bin", "devhostd")
    return checkout if os.path.isfile(checkout) else os.path.join(os.path.dirname(sys.executable), "devhostd")


def program_prefix() -> str:
    """devhostd's own command line, to which an agent adds a subcommand."""
    return f"{shlex.quote(sys.executable)} {shlex.quote(_program())}"


def command_prefix() -> str:
    """The command line an agent publishes with (devhostd/visual_publish.py)."""
    return f"{program_prefix()} visual publish"


def publish_hint() -> str:
    """What the appended prompt says about visuals."""
    return (f"To show the person a page in this chat (a chart of numbers you measured, a diagram of "
            f"code you read, a table of a plan), write one HTML file and run: {command_prefix()} "
            f'--title "<what it shows>" <file.html> (it talks to devhostd on this machine: from a sandbox '
            f"without network, ask to run it outside the sandbox). {PAGE_RULES} {LAYOUT_GUIDE} {THEME_GUIDE}")


def page_hint() -> str:
    """What the appended prompt says about the open pages (devhostd/page_command.py)."""
    return ("To see what the person's open pages of this checkout report (console and uncaught errors with "
            "source-mapped file:line, failed requests, or one element's source file, component and text), run: "
            f"{program_prefix()} page errors (or page requests, or page element '<css selector>').")


def with_visuals(prompt: str, default: bool) -> str:
    """The page's appended prompt, with the visuals and pages hints when it is devhostd's own
    prompt (a manifest's own prompt is left as its author wrote it)."""
    return f"{prompt}\n\n{publish_hint()}\n{page_hint()}" if default and prompt else prompt


def _invalid(message: str) -> ChatError:
    return ChatError("visual-invalid", message)


def normalize(title, html, max_height=None, heights=None) -> tuple[str, str, int, list | None]:
    """(title, html, maxHeight, heights) checked and tidied, or the first problem refused in
    words that tell the agent what to change."""
    if not isinstance(title, str) or not title.strip():
        raise _invalid("A visual needs a title; give it a short one that says what the page shows")
    title = title.strip()
    if _units(title) > LIMITS["title"]:
        raise _invalid(f"The title has {_units(title)} characters; keep it to {LIMITS['title']} or fewer")
    if not isinstance(html, str) or not html.strip():
        raise _invalid("The page is empty; pass one self-contained HTML document")
    if max_height is None:
        max_height = LIMITS["maxHeight"]
    if isinstance(max_height, bool) or not isinstance(max_height, (int, float)) or not math.isfinite(max_height) \
            or not LIMITS["minHeight"] <= max_height <= LIMITS["maxHeight"]:
        raise _invalid("The maximum height must be from 80 to 2000 CSS pixels; leave it out for 2000")
    return title, html, round(max_height), _heights(heights)


def _heights(heights) -> list | None:
    problem = _invalid("Measured heights are at most 24 pairs of [width, height] in CSS pixels, with a positive width")
    if heights is None:
        return None
    if not isinstance(heights, list) or len(heights) > LIMITS["heights"]:
        raise problem
    by_width: dict[int, int] = {}
    for pair in heights:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in pair):
            raise problem
        width, height = pair
        if width <= 0 or height < 0:
            raise problem
        by_width[max(1, round(width))] = math.ceil(height)  # the last pair for a width wins
    return [[w, by_width[w]] for w in sorted(by_width)] or None


def too_large(size: int) -> ChatError:
    return ChatError("visual-too-large", f"The page is {size / 1048576:.1f} MiB and a visual may be at most "
                                         f"{LIMITS['bytes'] / 1048576:.1f} MiB; inline less: draw charts with SVG "
                                         "or a canvas and shrink or leave out large images")


def record(title: str, max_height: int, heights: list | None, size: int, at: int, turn_id: str | None) -> dict:
    visual = {"id": secrets.token_hex(8), "title": title, "at": at, "maxHeight": max_height, "size": size}
    if heights:
        visual["heights"] = heights
    if turn_id:
        visual["turnId"] = turn_id
    return visual


def frame_height(visual: dict, width: float) -> int | None:
    """The frame's height at ``width`` from the measured heights: the larger of the nearest
    measurements below and above, within 80..maxHeight; None when none brackets it."""
    heights = visual.get("heights") or []
    below = [h for w, h in heights if w <= width]
    above = [h for w, h in heights if w >= width]
    if not below or not above:
        return None
    tallest = max(below[-1], above[0])
    return max(LIMITS["minHeight"], min(math.ceil(min(tallest, visual.get("maxHeight", LIMITS["maxHeight"]))),
                                        LIMITS["maxHeight"]))


# ---- the bootstrap put into every page ---------------------------------------------------------

_SKIPPED = re.compile(r"\s+|<!--.*?-->|<!doctype[^>]*>|<html(?:\s[^>]*)?>", re.I | re.S)
_HEAD = re.compile(r"<head(?:\s[^>]*)?>", re.I)
_VIEWPORT = re.compile(r"<meta\s[^>]*name\s*=\s*[\"']?viewport", re.I)

LIGHT = {"background": "#ffffff", "foreground": "#18181b", "muted": "#f4f4f5", "muted-foreground": "#71717a",
         "card": "#ffffff", "card-foreground": "#18181b", "popover": "#ffffff", "popover-foreground": "#18181b",
         "secondary": "#f4f4f5", "secondary-foreground": "#18181b", "border": "rgba(24, 24, 27, 0.12)",
         "input": "rgba(24, 24, 27, 0.16)", "ring": "rgba(24, 24, 27, 0.4)", "primary": "#18181b",
         "primary-foreground": "#fafafa", "accent": "#f4f4f5", "accent-foreground": "#18181b",
         "destructive": "#dc2626", "destructive-foreground": "#ffffff", "warning": "#d97706",
         "warning-foreground": "#ffffff", "success": "#16a34a", "success-foreground": "#ffffff", "info": "#2563eb",
         "info-foreground": "#ffffff", "code-background": "#f4f4f5", "code-foreground": "#18181b",
         "chart-1": "#2563eb", "chart-2": "#ea580c", "chart-3": "#0d9488", "chart-4": "#9333ea",
         "chart-5": "#db2777", "chart-6": "#ca8a04"}
DARK = {"background": "#18181b", "foreground": "#fafafa", "muted": "#27272a", "muted-foreground": "#a1a1aa",
        "card": "#1f1f23", "card-foreground": "#fafafa", "popover": "#27272a", "popover-foreground": "#fafafa",
        "secondary": "#27272a", "secondary-foreground": "#fafafa", "border": "rgba(250, 250, 250, 0.12)",
        "input": "rgba(250, 250, 250, 0.16)", "ring": "rgba(250, 250, 250, 0.4)", "primary": "#fafafa",
        "primary-foreground": "#18181b", "accent": "#27272a", "accent-foreground": "#fafafa",
        "destructive": "#ef4444", "destructive-foreground": "#ffffff", "warning": "#f59e0b",
        "warning-foreground": "#18181b", "success": "#22c55e", "success-foreground": "#18181b", "info": "#3b82f6",
        "info-foreground": "#ffffff", "code-background": "#27272a", "code-foreground": "#fafafa",
        "chart-1": "#60a5fa", "chart-2": "#fb923c", "chart-3": "#2dd4bf", "chart-4": "#c084fc",
        "chart-5": "#f472b6", "chart-6": "#facc15"}
SHARED = {"radius": "8px", "font-sans": "system-ui, sans-serif", "font-mono": "ui-monospace, monospace"}


def _palette(colors: dict) -> str:
    return "".join(f"--{name}:{value};" for name, value in {**colors, **SHARED}.items())


# Dark, or light where the system prefers it; the panel's own pick (``appearance``, set as the
# root's data-appearance by the bridge) wins over the system's: a person who picked dark on a
# light system gets a dark visual. Variables the panel passes win over both.
STYLE = (f":root{{{_palette(DARK)}}}@media (prefers-color-scheme: light){{:root{{{_palette(LIGHT)}}}}}"
         f"[data-appearance=dark]{{{_palette(DARK)}}}[data-appearance=light]{{{_palette(LIGHT)}}}"
         "html{background:var(--background);color:var(--foreground);font-family:var(--font-sans);font-size:14px;"
         "line-height:1.5;-webkit-text-size-adjust:100%;text-size-adjust:100%;overflow:hidden;scrollbar-width:none}"
         "html::-webkit-scrollbar{display:none}body{margin:0}")

# The page's side of the bridge (JSON-RPC 2.0 over postMessage to the panel): the theme the panel
# passes in the address's fragment and later messages, the page's size as it changes, and links
# opened by the panel (a sandboxed frame cannot open them itself).
SCRIPT = r"""(function(){
var me=document.currentScript;if(window.__visualBridge){if(me)me.remove();return;}window.__visualBridge=1;
var framed=window.parent!==window,style=document.querySelector("style[data-visual-theme]"),base=style?style.textContent:"";
var NAME=/^--[a-z0-9-]{1,64}$/,BAD=/[;{}<>\\\r\n]|\/\*|\*\//;
function apply(theme){if(!theme||!style)return;var vars=theme.variables||theme.styles&&theme.styles.variables||{},css="";
 for(var k in vars){var v=vars[k];if(NAME.test(k)&&typeof v==="string"&&v.trim()&&v.length<=512&&!BAD.test(v))css+=k+":"+v.trim()+";";}
 var look=theme.appearance||theme.theme,root=document.documentElement;look=look==="dark"||look==="light"?look:"";
 root.style.colorScheme=look;if(look)root.setAttribute("data-appearance",look);else root.removeAttribute("data-appearance");
 style.textContent=base+(css?":root{"+css+"}":"");}
try{var m=/(?:^#|&)visual-theme=([^&]*)/.exec(location.hash);if(m){apply(JSON.parse(decodeURIComponent(m[1])));
 history.replaceState(null,"",location.href.replace(/[#&]visual-theme=[^&]*/,"").replace(/#$/,""));}}catch(e){}
window.addEventListener("message",function(e){if(e.source!==window.parent)return;var d=e.data;
 if(d&&d.jsonrpc==="2.0"&&d.method==="ui/notifications/host-context-changed")apply(d.params||{});});
var last="",queued=0,next=1;function size(){queued=0;var r=document.documentElement.getBoundingClientRect();
 var w=Math.ceil(r.width),h=Math.ceil(Math.max(r.height,document.documentElement.scrollHeight));if(w+"x"+h===last)return;last=w+"x"+h;
 window.parent.postMessage({jsonrpc:"2.0",method:"ui/notifications/size-changed",params:{width:w,height:h}},"*");}
if(framed&&window.ResizeObserver){new ResizeObserver(function(){if(!queued){queued=1;requestAnimationFrame(size);}}).observe(document.documentElement);}
document.addEventListener("click",function(e){if(!e.isTrusted)return;var a=e.target&&e.target.closest?e.target.closest("a"):null;if(!a)return;
 var href=a.getAttribute("href")||a.getAttribute("xlink:href");if(!href)return;var url;try{url=new URL(href,location.href);}catch(x){return;}
 if(!/^https?:$/.test(url.protocol)||(url.origin===location.origin&&url.pathname===location.pathname&&url.hash))return;
 if(framed){e.preventDefault();window.parent.postMessage({jsonrpc:"2.0",id:next++,method:"ui/open-link",params:{url:url.href}},"*");}
 else{a.target="_blank";a.rel="noopener";}},true);
})();"""  # noqa: E501 - minified script, served as written


def bootstrap(html: str) -> str:
    """The pieces a page gets first in its head: charset, a viewport unless it has one, the
    theme, and the bridge."""
    viewport = "" if _VIEWPORT.search(html) else '<meta name="viewport" content="width=device-width, initial-scale=1">'
    return (f'<meta charset="utf-8">{viewport}<style data-visual-theme>{STYLE}</style>'
            f"<script>{SCRIPT}</script>")


def inject(html: str) -> str:
    """``html`` with the bootstrap at the start of its head (a head is made when the first thing
    after the doctype, comments and the html start tag is not one)."""
    at = 0
    while True:
        skipped = _SKIPPED.match(html, at)
        if not skipped or skipped.end() == at:
            break
        at = skipped.end()
    head = _HEAD.match(html, at)
    if head:
        return html[:head.end()] + bootstrap(html) + html[head.end():]
    return html[:at] + "<head>" + bootstrap(html) + "</head>" + html[at:]
