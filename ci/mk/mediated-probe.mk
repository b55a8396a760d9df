# mediated-probe: the LangGraph.js interrupt workflow of the probes, its effects real
# HTTP POSTs, run inside `soundgate run`'s sandbox against a real gate
# (docs/verify/mediated-probe.md). It needs probes/js/node_modules, so it runs in
# `make probes` after probes-install; SOUNDGATE_REQUIRE_PROBES=1 makes a missing
# node or node_modules a failure there (in `make test` on a clean clone it skips).
PROBE_TARGETS += probes-mediated-run

.PHONY: probes-mediated-run
probes-mediated-run: probes-install
	@mkdir -p $(BUILD)
	rc=0; SOUNDGATE_REQUIRE_PROBES=1 $(GO) test -race -count=1 -v -run 'TestFrameworkProbe' ./impl/sandbox/escape/ \
	  > $(BUILD)/mediated-probe.log 2>&1 || rc=$$?; \
	  grep -E '^(---|ok|FAIL|PASS)|while paused|skipped' $(BUILD)/mediated-probe.log || true; exit $$rc
