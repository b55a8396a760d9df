# The Python client (clients/python): its tests against the real server, on the oldest
# and the newest CPython of the machine, each in a virtual environment under build/py
# (ci/py/test-python.sh); the tests import the client as installed by pip.
TEST_TARGETS += test-python
PY_BUILD := $(abspath $(BUILD))/py

.PHONY: test-python
test-python:
	@mkdir -p $(PY_BUILD)
	$(GO) build -o $(PY_BUILD)/soundgate ./cmd/soundgate
	$(GO) build -o $(PY_BUILD)/scenariogate ./internal/scenario/scenariogate
	SOUNDGATE_BIN=$(PY_BUILD)/soundgate SCENARIOGATE_BIN=$(PY_BUILD)/scenariogate ci/py/test-python.sh
