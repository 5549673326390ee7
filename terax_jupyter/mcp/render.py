"""The REST answers as the text a model reads: numbered lines, ``path:line:text``, short lists."""

from __future__ import annotations

from typing import Any

READ_LINES = 2000  # lines per read_file call, as the Terax agent's read_file
MAX_LINE_CHARS = 2000
MAX_OUTPUT_BYTES = 64 * 1024
SNAPSHOT_CHARS = 24 * 1024


def numbered(path: str, content: str, offset: int, limit: int) -> str:
    """Lines ``offset``.. of ``content`` as ``'   12\\tcode'``, within the caps, and how to go
    on when more is left."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    total = len(lines)
    if total == 0:
        return f"{path} is empty."
    if offset > total:
        raise ValueError(f"offset {offset} is past the end of {path} ({total} lines).")
    out: list[str] = []
    size = 0
    end = offset - 1
    for number in range(offset, min(total, offset + limit - 1) + 1):
        line = lines[number - 1].removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" [... line cut at {MAX_LINE_CHARS} characters]"
        text = f"{number:>5}\t{line}"
        size += len(text.encode("utf-8")) + 1
        if size > MAX_OUTPUT_BYTES and out:
            break
        out.append(text)
        end = number
    body = "\n".join(out)
    if end < total:
        body += f"\n[Showing lines {offset}-{end} of {total}. Read more with offset={end + 1}.]"
    return body


def grep_result(lines: list[str], summary: dict[str, Any]) -> str:
    if not lines:
        return "No matches."
    text = _capped("\n".join(lines))
    files, matches = summary.get("files", "?"), summary.get("matches", len(lines))
    more = "; more exist: narrow the path or pattern" if summary.get("truncated") else ""
    return f"{text}\n[{matches} matches in {files} files{more}.]"


def git_status(status: dict[str, Any]) -> str:
    branch = status.get("branch") or {}
    if branch.get("detached"):
        head = f"detached at {str(branch.get('oid') or '')[:12]}"
    else:
        head = f"on branch {branch.get('head') or '?'}"
        if branch.get("unborn"):
            head += " (no commits yet)"
    tracking = ""
    if branch.get("upstream"):
        tracking = (
            f", tracking {branch['upstream']} "
            f"(ahead {branch.get('ahead', 0)}, behind {branch.get('behind', 0)})"
        )
    lines = [f"Repository {status.get('root', '')} {head}{tracking}"]
    if status.get("index_locked"):
        lines.append("The index is locked (another git command is running).")
    for key, title in (
        ("conflicted", "Conflicted"),
        ("staged", "Staged"),
        ("unstaged", "Not staged"),
        ("untracked", "Untracked"),
    ):
        entries = status.get(key) or []
        if entries:
            lines.append(f"{title}:")
            lines.extend(_entry(entry) for entry in entries)
    if len(lines) == 1:
        lines.append("Nothing to commit, working tree clean.")
    return "\n".join(lines)


def _entry(entry: dict[str, Any]) -> str:
    path = entry.get("path", "")
    if entry.get("old_path"):
        path = f"{entry['old_path']} -> {path}"
    notes = " (protected: contents not shown)" if entry.get("denied") else ""
    return f"  {entry.get('status', '?'):<10} {path}{notes}"


def page(answer: dict[str, Any], done: str) -> str:
    """A browser tab's answer: what was done, refusals, the snapshot with a ref per element."""
    lines = [done] if done else []
    blocked = answer.get("blocked") or []
    if blocked:
        lines.append(f"Blocked (not loopback): {len(blocked)} request(s), e.g. {blocked[-1]}")
    if answer.get("cacheable") is False:
        lines.append("This flow can no longer be saved as a workflow (see browser_type's input).")
    lines.append(str(answer.get("text", "")))
    text = "\n".join(lines)
    if len(text) > SNAPSHOT_CHARS:
        text = text[:SNAPSHOT_CHARS] + "\n[... snapshot cut; use browser_wait or scroll less]"
    return text


def workflows(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No saved workflows."
    out = []
    for item in items:
        policy = item.get("policy") or {}
        inputs = ", ".join(item.get("inputs") or []) or "none"
        first = next(
            (s.get("url") for s in item.get("steps") or [] if s.get("kind") == "navigate"), ""
        )
        line = (
            f"- {item.get('name')} ({policy.get('side_effect', '?')}, "
            f"version {policy.get('workflow_version', '?')}, "
            f"{len(item.get('steps') or [])} steps, inputs: {inputs}) on {first}"
        )
        if item.get("description"):
            line += f": {item['description']}"
        out.append(line)
    return "\n".join(out)


def saved(workflow: dict[str, Any]) -> str:
    policy = workflow.get("policy") or {}
    inputs = ", ".join(workflow.get("inputs") or []) or "none"
    return (
        f"Saved workflow {workflow.get('name')!r} (version {policy.get('workflow_version')}, "
        f"{len(workflow.get('steps') or [])} steps, {policy.get('side_effect')}, "
        f"inputs: {inputs})."
    )


def replayed(result: dict[str, Any]) -> str:
    total = (result.get("timings_ms") or {}).get("total")
    timing = f" in {total:.0f} ms" if isinstance(total, int | float) else ""
    return (
        f"Replayed {result.get('workflow')!r}: {result.get('steps_replayed')} steps{timing}, "
        f"postconditions hold, {result.get('model_calls', 0)} model calls."
    )


def _capped(text: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= MAX_OUTPUT_BYTES:
        return text
    cut = data[:MAX_OUTPUT_BYTES].decode("utf-8", "ignore").rsplit("\n", 1)[0]
    return cut + "\n[... output cut at 64 KiB]"


def tail(text: str) -> str:
    """The end of ``text`` within the output cap (a terminal's latest output matters most)."""
    data = text.encode("utf-8")
    if len(data) <= MAX_OUTPUT_BYTES:
        return text
    kept = data[-MAX_OUTPUT_BYTES:].decode("utf-8", "ignore").split("\n", 1)[-1]
    return "[... earlier output cut at 64 KiB]\n" + kept
