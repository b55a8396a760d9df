"""The MCP server of the MCP probe (frameworks/mcp_host.py): a real stdio MCP
server on the official Python SDK (FastMCP), whose three tools are effects on
the probe's world. Each tool reports its effect to the probe's event log over
the Unix socket named by its one argument, and returns once the log has it, so
that the log's order is the order in which the effects happened.

    python mcp_world.py SOCKET
"""

from __future__ import annotations

import json
import socket
import sys

from mcp.server.fastmcp import FastMCP

SOCKET = sys.argv[1] if len(sys.argv) == 2 else sys.exit("usage: python mcp_world.py SOCKET")

world = FastMCP("world")


def _commit(tool: str) -> str:
    """Reports one effect of `tool` and waits for the log to take it."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(SOCKET)
        s.sendall((json.dumps({"tool": tool}) + "\n").encode())
        reply = s.makefile().readline().strip()
    if reply != "ok":
        raise RuntimeError(f"mcp_world: the event log did not take the effect: {reply!r}")
    return f"{tool}: done"


@world.tool(description="delete a file (the probe's policy gates it)")
def delete_file(path: str) -> str:
    return _commit("delete_file")


@world.tool(description="send an email")
def send_email(to: str) -> str:
    return _commit("send_email")


@world.tool(description="write a file")
def write_file(path: str) -> str:
    return _commit("write_file")


if __name__ == "__main__":
    world.run("stdio")
