# mcp: soundgate mcp-proxy against a real MCP server (docs/integrations/mcp.md).
# ci/mcp/install.sh installs @modelcontextprotocol/server-filesystem from npm, pinned in
# ci/mcp/upstream/package-lock.json (npm ci; node_modules is gitignored). test-go needs
# it too: its `go test ./...` runs the same tests of cmd/soundgate, which fail rather
# than skip without the upstream when $CI is set. test-mcp then runs those tests (the
# built binary between a Go SDK host and that server) with CI=1, so that a missing
# upstream is a failure here whatever the environment says. The proxy's in-memory tests
# (impl/mcpproxy) run in test-go with the rest of the suite.
TEST_TARGETS += test-mcp

.PHONY: test-mcp mcp-upstream
mcp-upstream:
	ci/mcp/install.sh

test-go: mcp-upstream

test-mcp: mcp-upstream
	CI=1 $(GO) test -race -count=1 -run 'TestMCPProxy' ./cmd/soundgate
