# node-client: @soundgate/client as a JS developer installs it (clients/node/README.md).
# `npm pack`, `npm install` of the tarball into a fresh project (offline: the package
# has no dependencies), then against that installed copy, imported by name: a smoke
# test on a real gate, its declarations against its exports, the integration pages'
# import lines, and `tsc --noEmit --strict` on test/types (TypeScript pinned in
# clients/node/dev/package-lock.json, installed here by npm ci; never global).
# The client's own tests run in test-probes (ci/mk/probes.mk).
TEST_TARGETS += test-node-client

.PHONY: test-node-client
test-node-client:
	cd clients/node/dev && npm ci --no-audit --no-fund --loglevel=error
	cd clients/node && node --test test/package/*.test.mjs
