"""Find `# comments` in rule text (the grammar ignores them; the formatter keeps them)."""

from __future__ import annotations


def scan_comments(text: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of every comment. Strings cannot span lines, so a per-line scan suffices."""
    out: list[tuple[int, int, str]] = []
    offset = 0
    # Only "\n" ends a line for the grammar (str.splitlines would also split on U+2028 and friends).
    for line in text.split("\n"):
        line += "\n"
        in_string = escaped = False
        for i, ch in enumerate(line):
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "#":
                body = line[i:].rstrip("\r\n")
                out.append((offset + i, offset + i + len(body), body))
                break
        offset += len(line)
    return out
