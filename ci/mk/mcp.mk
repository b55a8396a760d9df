# mcp: soundgate mcp-proxy against a real MCP server (docs/integrations/mcp.md), driven
# by two real MCP hosts: the Go SDK's and the Python SDK's (the `mcp` package, 1.30.0).
# ci/mcp/install.sh installs @modelcontextprotocol/server-filesystem from npm, pinned in
# ci/mcp/upstream/package-lock.json (npm ci; node_modules is gitignored). test-go needs
# it too: its `go test ./...` runs the same tests of cmd/soundgate, which fail rather
# than skip without the upstream when $CI is set. test-mcp then runs, with CI=1 so that
# a missing upstream is a failure here whatever the environment says:
#   - those Go tests (TestMCPProxy*: the built binary between a Go SDK host and that server);
#   - ci/mcp/test_python_host.py through ci/mcp/test-python-host.sh: the built binary
#     between a Python mcp ClientSession (stdio) and that server, the Python gate client
#     (clients/python) approving and cancelling; in build/mcp/py-venv, made by
#     ci/py/venv.sh --exact from ci/mcp/requirements-py.txt (every package pinned) on the
#     newest CPython of the machine (ci/py/pythons.sh), once: later runs reuse it. A venv
#     that cannot be built fails the target, and so does a test skipped. It ends with one
#     line: "test-mcp: Python mcp 1.30.0 host (CPython …): N passed …".
# The proxy's in-memory tests (impl/mcpproxy) run in test-go with the rest of the suite.
TEST_TARGETS += test-mcp
MCP_BUILD := $(abspath $(BUILD))/mcp

.PHONY: test-mcp mcp-upstream
mcp-upstream:
	ci/mcp/install.sh

test-go: mcp-upstream

test-mcp: mcp-upstream
	CI=1 $(GO) test -race -count=1 -run 'TestMCPProxy' ./cmd/soundgate
	@mkdir -p $(MCP_BUILD)
	$(GO) build -o $(MCP_BUILD)/soundgate ./cmd/soundgate
	CI=1 SOUNDGATE_BIN=$(MCP_BUILD)/soundgate ci/mcp/test-python-host.sh
