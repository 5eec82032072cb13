"""Server names as the logs spell them, and the identifiers a shadow's `250` answer names.

FIELD-NOTES, "What real message tracking logs show about shadow redundancy": server names appear both short and
fully qualified (`MBX1`, `MBX1.contoso.com`), and HAREDIRECT's source-context is formatted differently by
different builds (spaces around `=`, values even in the other order). Seed 000, "How shadow messages are
created" (interpretations SR-I26, SR-I29; issue 31).

Names are case-folded and a trailing dot dropped, nothing else: a name is never cut at its first label and an IP
address never at its first dot (`mail.x.x`, `my.mail.server.com`, `172.20.15.25` stay as they are). A fully
qualified name is read as the short name only when that short name is itself seen in the import (a tracking
`server-hostname`, a connector `SERVER\\Name`, a `--boundary`), and no other domain shares that short name;
every such clash is reported, never merged.
"""

from __future__ import annotations

import re

from spec.catalogue import require

require("SR-030", "TR-007")

_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_IPV6 = re.compile(r"^\[?[0-9a-f]*:[0-9a-f:.%]*\]?$", re.I)
_NUMBER = re.compile(r"^\d+$")
_NAME = r"[A-Za-z0-9][A-Za-z0-9.\-]*"
_IDS = re.compile(rf"\[\s*InternalId\s*=\s*({_NAME})\s*(?:,\s*Hostname\s*=\s*({_NAME})\s*)?\]", re.I)
_IID = re.compile(rf"InternalId\s*=\s*({_NAME})", re.I)
_HOST = re.compile(rf"Hostname\s*=\s*({_NAME})", re.I)
_LEADING_HOST = re.compile(rf"^\s*({_NAME})\s*=\s*\d{{3}}\b")


def clean(name: str) -> str:
    """Case-folded, without surrounding space, brackets or a trailing dot; never shortened."""
    return name.strip().strip("[]").lower().rstrip(".")


def is_address(name: str) -> bool:
    n = clean(name)
    return bool(_IPV4.match(n) or _IPV6.match(n))


def is_host(value: str) -> bool:
    """A host name or address, never a bare number (an internal-message-id is a number)."""
    return bool(value) and not _NUMBER.match(value.strip())


def same_host(a: str, b: str) -> bool:
    """`mbx1` and `MBX1.contoso.com` name one host; two addresses or two full names must be equal."""
    a, b = clean(a), clean(b)
    if a == b:
        return True
    if is_address(a) or is_address(b):
        return False
    return ("." not in a and b.split(".")[0] == a) or ("." not in b and a.split(".")[0] == b)


class Names:
    """Short vs fully qualified server names: `mbx1` and `MBX1.contoso.com` are one server when `mbx1` is seen."""

    def __init__(self, seen: set[str]) -> None:
        names = {n for n in (clean(x) for x in seen) if n}
        shorts = {n for n in names if "." not in n and not is_address(n)}
        by_short: dict[str, set[str]] = {}
        for n in names:
            if "." in n and not is_address(n):
                by_short.setdefault(n.split(".")[0], set()).add(n)
        self.aliases: dict[str, str] = {n: n for n in names}
        self.conflicts: list[str] = []
        for short, full in sorted(by_short.items()):
            if short not in shorts:
                continue
            if len(full) == 1:
                self.aliases[next(iter(full))] = short
            else:
                self.conflicts.append(
                    f"the short name {short} is seen with {len(full)} domains ({', '.join(sorted(full))}): "
                    f"they are kept apart, and rows naming only {short} are not joined to either"
                )

    def norm(self, name: str) -> str:
        n = clean(name)
        return self.aliases.get(n, n) if n else ""


def reply_ids(text: str) -> tuple[str, str, bool]:
    """(InternalId, Hostname, swapped) of a `250 ... [InternalId=N, Hostname=H]` answer; values given in the
    other order (a name as InternalId and a number as Hostname, as in public samples) are read swapped."""
    m = _IDS.search(text)
    if m is None:
        return "", "", False
    iid, host = m.group(1), m.group(2) or ""
    if is_host(iid) and host and not is_host(host):
        return host, iid, True
    return (iid if not is_host(iid) else ""), (host if is_host(host) else ""), False


def parse_redirect(context: str) -> tuple[str | None, str | None, str]:
    """(shadow host, shadow InternalId, problem) from a HAREDIRECT source-context, leniently (FIELD-NOTES):
    `<shadow> = 250 2.6.0 <mid> [InternalId = N, Hostname = <shadow>] ...`, in either order of the values. A number
    is never a host and a name never an InternalId; what cannot be read is the problem."""
    values = [m.group(1) for m in (_IID.search(context), _HOST.search(context)) if m]
    lead = _LEADING_HOST.match(context)
    ids = [v for v in values if not is_host(v)]
    hosts = [v for v in values if is_host(v)]
    if lead:
        hosts.insert(0, lead.group(1))
    problems = []
    if not ids:
        problems.append("no InternalId in source-context" + (f" ({values[0]!r} is not a number)" if values else ""))
    shadow = hosts[0] if hosts else None
    if shadow is None:
        problems.append("no shadow host name in source-context")
    elif any(not same_host(h, shadow) for h in hosts[1:]):
        problems.append(f"source-context names two shadow hosts ({', '.join(dict.fromkeys(hosts))})")
    return shadow, ids[0] if ids else None, "; ".join(problems)
