"""What the agent is told about visuals: the publish hint in its appended prompt names the theme
variables a page can use, and each one it names is set by the bootstrap every page gets, in the
dark palette and the light one, so a page the agent styles by the hint matches the panel."""
from __future__ import annotations

import re

from actors.core import visuals


def _named(text: str) -> set[str]:
    """The CSS variables a text names; "--chart-1 to --chart-6" names the six between."""
    names = set(re.findall(r"--[a-z][a-z0-9-]*[a-z0-9]", text))
    for first, last in re.findall(r"--chart-(\d) to --chart-(\d)", text):
        names |= {f"--chart-{n}" for n in range(int(first), int(last) + 1)}
    return names


def test_the_publish_hint_names_the_theme_variables():
    hint = visuals.publish_hint()
    named = _named(hint)
    assert {"--background", "--foreground", "--muted-foreground", "--border", "--primary",
            "--font-sans", "--font-mono"} <= named
    assert {f"--chart-{n}" for n in range(1, 7)} <= named
    assert visuals.THEME_GUIDE in hint


def test_every_variable_the_hint_names_is_set_by_the_bootstrap_in_both_palettes():
    named = _named(visuals.THEME_GUIDE)  # the hint's other "--" words are the command's flags
    dark, light = ({f"--{name}" for name in {**palette, **visuals.SHARED}} for palette in (visuals.DARK, visuals.LIGHT))
    assert named <= dark and named <= light, (named - dark, named - light)
    page = visuals.bootstrap("<p>hi</p>")
    assert all(f"{name}:" in page for name in named)


def test_the_agent_gets_the_hint_in_devhostds_own_prompt_but_a_manifests_prompt_is_left_as_written():
    assert visuals.THEME_GUIDE in visuals.with_visuals("You work in a page's checkout.", default=True)
    assert visuals.with_visuals("The manifest's own words.", default=False) == "The manifest's own words."
