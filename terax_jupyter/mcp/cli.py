"""``jupyter terax mcp [--url URL] [--token TOKEN] [--print-config]``.

stdout is the MCP protocol: everything for a person (logs, errors) goes to stderr, except
``--print-config``, which serves no protocol and prints its snippets to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import shlex
import sys

import anyio

from terax_jupyter.client.discovery import DiscoveryError, ServerTarget, discover
from terax_jupyter.mcp.connection import Connection
from terax_jupyter.mcp.server import serve

log = logging.getLogger("terax_jupyter.mcp")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="jupyter terax mcp",
        description="Serve Terax's tools to an MCP client (Claude Code, Codex, Cursor) over "
        "stdio, through the running Terax server and its security rules.",
    )
    p.add_argument("--url", help="the server's base URL (default: TERAX_URL, or found)")
    p.add_argument(
        "--token",
        help="the server's token (default: TERAX_TOKEN, or the running server's own); "
        "prefer the environment variable: arguments show in process lists",
    )
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print config snippets for Claude Code, Codex and Cursor, and the server found",
    )
    p.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="what is logged to stderr (default WARNING)",
    )
    return p


def main(argv: list[str] | None = None) -> None:
    options = parser().parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=options.log_level,
        format="terax mcp: %(levelname)s %(message)s",
    )
    if options.print_config:
        raise SystemExit(print_config(options.url, options.token))
    connection = Connection(options.url, options.token)
    try:
        connection.use(discover(options.url, options.token))
    except DiscoveryError as error:
        # Serve anyway: the tools find the server when it runs (and say how, until then).
        log.warning("%s", error)
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve, connection)


def _command(url: str | None) -> list[str]:
    # Never the token: a config file is no place for it (TERAX_TOKEN, or discovery).
    return ["jupyter", "terax", "mcp", *(["--url", url] if url else [])]


def config_snippets(url: str | None = None) -> str:
    """Ready-to-paste configuration for Claude Code, Codex and Cursor."""
    command = _command(url)
    args_toml = ", ".join(json.dumps(a) for a in command[1:])
    cursor = json.dumps(
        {"mcpServers": {"terax": {"command": command[0], "args": command[1:]}}}, indent=2
    )
    python = shlex.join([sys.executable, "-m", "terax_jupyter", *command[2:]])
    return "\n".join(
        [
            "Claude Code (run once):",
            f"  claude mcp add terax -- {shlex.join(command)}",
            "",
            "Codex (~/.codex/config.toml):",
            "  [mcp_servers.terax]",
            f'  command = "{command[0]}"',
            f"  args = [{args_toml}]",
            "",
            "Cursor (.cursor/mcp.json):",
            *("  " + line for line in cursor.splitlines()),
            "",
            "If `jupyter` is not on the agent's PATH, use this command instead:",
            f"  {python}",
        ]
    )


def describe(target: ServerTarget) -> str:
    version = f", Terax {target.version}" if target.version else ""
    return f"{target.url} (found via {target.source}; root {target.root}{version})"


def print_config(url: str | None, token: str | None) -> int:
    """Print the snippets and the server they would reach (never its token); 1 when no
    server answers."""
    print(config_snippets(url))
    print()
    try:
        target = discover(url, token)
    except DiscoveryError as error:
        print(f"jupyter terax mcp: {error}", file=sys.stderr)
        return 1
    print(f"Terax server: {describe(target)}")
    if url and "runtime file" not in target.source:
        print("Give the MCP client the token in its environment as TERAX_TOKEN.")
    return 0
