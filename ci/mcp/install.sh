#!/usr/bin/env bash
# Installs the real MCP server the mcp-proxy test launches behind the proxy:
# @modelcontextprotocol/server-filesystem, pinned with its dependencies in
# ci/mcp/upstream/package-lock.json, into ci/mcp/upstream/node_modules (gitignored).
# Needs Node 20 and npm; nothing is installed globally.
set -euo pipefail
cd "$(dirname "$0")/upstream"
npm ci --no-audit --no-fund --loglevel=error
test -f node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
echo "ci/mcp/install.sh: $(node -p 'require("@modelcontextprotocol/server-filesystem/package.json").name + "@" + require("@modelcontextprotocol/server-filesystem/package.json").version') installed in ci/mcp/upstream"
