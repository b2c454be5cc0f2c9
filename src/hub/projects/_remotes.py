"""Repository remote URLs and their normalised binding.

Two spellings of one remote must be one binding, because integration reservations
are keyed by it (docs/design.md, "Project boundaries"): `git@github.com:o/r.git`,
`ssh://git@github.com/o/r` and `https://GitHub.com/o/r/` all bind `github.com/o/r`.
Host case, scheme, user info, a trailing `.git` and trailing slashes do not matter;
path case does (most hosts treat paths case-sensitively). Credentials in a URL are
never stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from hub.errors import ValidationFailed

_SCP_LIKE = re.compile(
    r"^(?:(?P<user>[^@/\s]+)@)?(?P<host>[A-Za-z0-9.\-]+):(?P<path>[^/\s][^\s]*)$"
)
_HOST = re.compile(r"^[a-z0-9]([a-z0-9\-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9\-]*[a-z0-9])?)*$")
_DEFAULT_PORTS = {"https": 443, "http": 80, "ssh": 22, "git": 9418}


@dataclass(frozen=True)
class Remote:
    url: str  # as stored: the given URL without credentials
    binding: str  # normalised identity: host[:port]/path, or file:/path


def normalise_remote(raw: str, *, field: str = "remoteUrl") -> Remote:
    text = raw.strip()
    if not text or len(text) > 500 or any(ch.isspace() for ch in text):
        raise ValidationFailed(field, "must be a git remote URL without spaces")
    if text.startswith("file://"):
        path = _clean_path(text[len("file://") :], field)
        return Remote(url=f"file:///{path}", binding=f"file:/{path}")
    scp = _SCP_LIKE.match(text)
    if scp and "://" not in text:
        host = _clean_host(scp.group("host"), field)
        path = _clean_path(scp.group("path"), field)
        # `user:password@host:path` is not git syntax, but a password typed there must
        # not be stored either: keep the user name only.
        user = (scp.group("user") or "").partition(":")[0]
        url = f"{user}@{host}:{path}.git" if user else f"{host}:{path}.git"
        return Remote(url=url, binding=f"{host}/{path}")
    try:
        parts = urlsplit(text)
    except ValueError:  # e.g. an unclosed "[" of an IPv6 host
        raise ValidationFailed(field, "is not a valid URL") from None
    if parts.scheme not in _DEFAULT_PORTS and parts.scheme != "git+ssh":
        raise ValidationFailed(field, "must use https, http, ssh, git, file or scp-like syntax")
    try:
        port = parts.port
    except ValueError:
        raise ValidationFailed(field, "has an invalid port") from None
    host = _clean_host(parts.hostname or "", field)
    path = _clean_path(parts.path, field)
    scheme = "ssh" if parts.scheme == "git+ssh" else parts.scheme
    location = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    user = parts.username if scheme == "ssh" else None  # ssh user names are not secrets
    url = f"{scheme}://{user + '@' if user else ''}{location}/{path}"
    return Remote(url=url, binding=f"{location}/{path}")


def _clean_host(host: str, field: str) -> str:
    host = host.lower().rstrip(".")
    if not host or not _HOST.match(host):
        raise ValidationFailed(field, "has no valid host name")
    return host


def _clean_path(path: str, field: str) -> str:
    path = path.strip("/")
    while path.endswith("/"):
        path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    segments = [segment for segment in path.split("/") if segment]
    if not segments or any(segment in (".", "..") for segment in segments):
        raise ValidationFailed(field, "has no repository path")
    return "/".join(segments)


def looks_like_remote(text: str) -> bool:
    return "://" in text or bool(_SCP_LIKE.match(text.strip()))
