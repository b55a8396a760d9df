# browser: the approvers' page of `soundgate serve --http` (docs/approvers.md) in a
# real browser. ci/browser/install.sh installs Debian's chromium (apt-get) and
# playwright-core, pinned in ci/browser/package-lock.json, into build/browser/npm (npm
# ci; never global, nothing of the tree outside build/); playwright-core downloads no
# browser, it drives /usr/bin/chromium headless. ci/browser/approvers.test.mjs then runs
# the built binary with a roles file of its own and the Node.js client as the agent:
# an approver signs in, approves a held effect and the agent's waiting sibling admit
# is admitted; a rejection denies the next; an agent's token cannot sign in; markup
# and escape sequences in keys and descriptions show as inert text. Screenshots are
# kept in build/browser/*.png. A chromium that cannot be installed or started fails
# the target (install.sh exits 1, the test fails on any missing piece): it never
# passes without a browser, in CI or elsewhere. The page's HTTP side (sign-in, CSRF,
# origins, headers, decisions as the wire's) is tested in Go: impl/server/web*_test.go.
TEST_TARGETS += test-browser

.PHONY: test-browser browser-deps
browser-deps:
	ci/browser/install.sh

test-browser: browser-deps
	@mkdir -p $(BUILD)/bin $(BUILD)/browser
	$(GO) build -o $(BUILD)/bin/soundgate ./cmd/soundgate
	SOUNDGATE_BIN=$(abspath $(BUILD))/bin/soundgate node --test --test-reporter=spec ci/browser/approvers.test.mjs
