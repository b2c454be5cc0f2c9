"""An artifact's display name: the client's file name, cleaned and bounded, and only
ever shown. It never reaches a path or an object key (those are generated: the store's
`<project id>/<artifact id>`), so `../../etc/passwd` is a name like any other."""

from __future__ import annotations

import unicodedata

MAX_NAME = 255
UNNAMED = "unnamed"
# Control characters (NUL included), format characters (bidirectional overrides that
# would show `gnp.exe` as `exe.png`) and lone surrogates.
_DROPPED = frozenset({"Cc", "Cf", "Cs"})
_LONGEST_SUFFIX = 16


def clean_display_name(value: str) -> str:
    """The name as shown: without control and format characters (a tab or a line break
    becomes a space), white space folded, at most MAX_NAME characters (a longer one
    keeps its suffix: `….log`)."""
    kept = "".join(
        (" " if ch.isspace() else "") if unicodedata.category(ch) in _DROPPED else ch
        for ch in value
    )
    name = " ".join(kept.split())
    if len(name) > MAX_NAME:
        stem, dot, suffix = name.rpartition(".")
        tail = f"…{dot}{suffix}" if dot and stem and len(suffix) <= _LONGEST_SUFFIX else "…"
        name = name[: MAX_NAME - len(tail)] + tail
    return name or UNNAMED


def download_name(display_name: str, fallback: str) -> str:
    """The file name a download suggests: the display name's last part, without leading
    dots (a browser still sanitises it; hub never writes it anywhere)."""
    last = display_name.replace("\\", "/").rsplit("/", 1)[-1].lstrip(". ")
    return last or fallback
