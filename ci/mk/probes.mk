# probes: the barrier probes (B1-B4) on real agent frameworks, unmodified and
# mediated through a running gate (docs/probes.md). The heavy dependencies live
# in probes/js (npm), probes/go (its own Go module) and the Python venv
# build/probes/py-venv (probes/py/requirements.lock), never in the root module.
#
#   make probes                  install, run every probe PROBES_REPEAT times in both
#                                variants, write probes/results/results.{md,json}
PROBE_TARGETS += probes-all
TEST_TARGETS  += test-probes
PROBES_REPEAT ?= 3
PROBES_BIN    := $(abspath $(BUILD))/probes/soundgate
PROBES_VENV   := $(abspath $(BUILD))/probes/py-venv
# the rules test needs only harness.py and pytest: from the venv when it exists, else the system's
PROBES_PYTEST = $(if $(wildcard $(PROBES_VENV)/bin/python),$(PROBES_VENV)/bin/python,python3) -m pytest -q -p no:cacheprovider

.PHONY: probes-all probes-install probes-run probes-table test-probes probes-docs

# test-probes: the JavaScript client against the real server, the probes' rules
# (JS, Go and Python) and the Go adapter against an in-process server. Needs no
# npm install and no Python framework (test_rules.py imports only harness.py).
test-probes:
	cd clients/node && node --test test/*.test.mjs
	cd probes/js && node --test test/*.test.mjs
	cd probes/go && $(GO) vet ./harness ./gatedrun && $(GO) test -race -count=1 ./harness ./gatedrun
	cd probes/py && $(PROBES_PYTEST) test_rules.py

probes-all: probes-install probes-run probes-table probes-trace

# Every gate the probes start writes its trace into PROBES_TRACES (servertest.Process
# and clients/node/test/server.mjs read $SOUNDGATE_TRACE_DIR); probes-trace replays
# them against the spec (docs/verify/drift.md, "Trace validation").
PROBES_TRACES := $(abspath $(BUILD))/probes/traces

probes-install:
	@mkdir -p $(BUILD)/probes
	probes/install.sh | tee $(BUILD)/probes/install.log

probes-run:
	$(GO) build -o $(PROBES_BIN) ./cmd/soundgate
	rm -rf probes/results/raw $(PROBES_TRACES) && mkdir -p probes/results/raw $(PROBES_TRACES)
	cd probes/js && SOUNDGATE_TRACE_DIR=$(PROBES_TRACES) SOUNDGATE_BIN=$(PROBES_BIN) node run.mjs --repeat $(PROBES_REPEAT) > $(abspath $(BUILD))/probes/js.log; rc=$$?; \
	  grep -E '^(VIOLATION|CLEAN|UNAVAILABLE|ERROR|js probes|mediated variant)' $(abspath $(BUILD))/probes/js.log; exit $$rc
	cd probes/go && SOUNDGATE_TRACE_DIR=$(PROBES_TRACES) SOUNDGATE_BIN=$(PROBES_BIN) $(GO) run ./cmd/probes -repeat $(PROBES_REPEAT) > $(abspath $(BUILD))/probes/go.log; rc=$$?; \
	  grep -E '^(VIOLATION|CLEAN|UNAVAILABLE|ERROR|go probes|mediated variant)' $(abspath $(BUILD))/probes/go.log; exit $$rc
	cd probes/py && SOUNDGATE_TRACE_DIR=$(PROBES_TRACES) SOUNDGATE_BIN=$(PROBES_BIN) $(PROBES_VENV)/bin/python run.py --repeat $(PROBES_REPEAT) > $(abspath $(BUILD))/probes/py.log; rc=$$?; \
	  grep -E '^(VIOLATION|CLEAN|UNAVAILABLE|ERROR|py probes|mediated variant)' $(abspath $(BUILD))/probes/py.log; exit $$rc
	$(MAKE) --no-print-directory probes-docs

# probes-docs: the code of every docs/integrations/*-py.md page, run by the venv's
# pytest against a real gate (probes/py/test_docs.py); needs the frameworks installed.
probes-docs:
	cd probes/py && SOUNDGATE_TRACE_DIR=$(PROBES_TRACES) SOUNDGATE_BIN=$(PROBES_BIN) $(PROBES_VENV)/bin/python -m pytest -q -p no:cacheprovider test_docs.py

probes-table:
	node probes/table.mjs | tee $(BUILD)/probes/table.log

probes-trace:
	@ls $(PROBES_TRACES)/*.ndjson >/dev/null 2>&1 || { echo "probes-trace: FAILED: the probes left no trace in $(PROBES_TRACES)"; exit 1; }
	$(GO) run ./cmd/tracecheck $(PROBES_TRACES)/*.ndjson | tee $(BUILD)/probes/trace.log | tail -n 1
