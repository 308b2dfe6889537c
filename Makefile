# podsched: `make demo` and `make test` are all a fresh Debian machine needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROTO_OUT ?= .
PROTO_SRC := $(wildcard protos/cluster/api/*.proto)
# The tests and the demo start hundreds of podsched processes: let the first write the bytecode the
# others load, even where the environment says not to (compiling podsched costs each process ~0.2 s).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: venv demo test lint protos gen-protos etcd browser clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(VENV)/.installed

demo: venv
	$(VENV)/bin/podsched demo

# etcd for the contract, integration and chaos tests: Debian's etcd-server when no etcd is on PATH and
# ETCD_BIN is unset. Anywhere else, install etcd 3.4+ yourself and set ETCD_BIN.
etcd:
	@if [ -n "$$ETCD_BIN" ]; then \
		[ -x "$$ETCD_BIN" ] || { echo "ETCD_BIN=$$ETCD_BIN is not an executable" >&2; exit 1; }; \
	elif ! command -v etcd >/dev/null 2>&1; then \
		echo "etcd not found: installing Debian's etcd-server"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq etcd-server >/dev/null \
			|| { echo "could not install etcd-server; install etcd and set ETCD_BIN" >&2; exit 1; }; \
	fi
	@$${ETCD_BIN:-etcd} --version | head -1

# Chromium and its chromedriver for the web view's browser tests (tests/browser): Debian's chromium and
# chromium-driver when they are not on PATH and CHROMIUM_BIN/CHROMEDRIVER_BIN are unset. Anywhere else,
# install a Chromium and the chromedriver of the same version yourself and set both variables.
browser:
	@for var in CHROMIUM_BIN CHROMEDRIVER_BIN; do \
		eval path=\$$$$var; \
		if [ -n "$$path" ] && [ ! -x "$$path" ]; then echo "$$var=$$path is not an executable" >&2; exit 1; fi; \
	done
	@if { [ -z "$$CHROMIUM_BIN" ] && ! command -v chromium >/dev/null 2>&1; } || \
	    { [ -z "$$CHROMEDRIVER_BIN" ] && ! command -v chromedriver >/dev/null 2>&1; }; then \
		echo "chromium or chromedriver not found: installing Debian's chromium and chromium-driver"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null \
			|| { echo "could not install chromium and chromium-driver; install them and set CHROMIUM_BIN and CHROMEDRIVER_BIN" >&2; exit 1; }; \
	fi
	@$${CHROMEDRIVER_BIN:-chromedriver} --version | head -1

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

# Tests that assert wall-clock bounds (failover times) run alone first; the rest two at a time, each test
# module on one worker (its module-scoped servers stay with it). Modules are handed out in collection order
# (contract and integration, then the many short unit modules), not xdist's default of most tests first,
# which leaves the few-test, long integration modules (bench, demo, README) for the end, one worker idle.
# Each run ends with its slowest tests, to see where the suite's time goes.
test: venv etcd browser lint
	$(VENV)/bin/pytest -q -p no:cacheprovider --durations=10 -m timing -n 2 --dist loadfile --no-loadscope-reorder
	$(VENV)/bin/pytest -q -p no:cacheprovider --durations=25 -m "not timing" -n 2 --dist loadfile --no-loadscope-reorder

# Regenerate the protobuf and gRPC code from protos/ (tests check that what is committed is fresh).
protos: venv
	$(MAKE) --no-print-directory gen-protos

gen-protos:
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=$(PROTO_OUT) --pyi_out=$(PROTO_OUT) \
		--grpc_python_out=$(PROTO_OUT) $(PROTO_SRC)

clean:
	rm -rf $(VENV) build *.egg-info
