# Bootstraps everything from python3: the venv, pinned packages (constraints.txt).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEV_CERTS := certs/dev

.PHONY: venv test lint typecheck unit unit-all realapi controlplane cluster cluster-down docs run certs \
	bench bench-http bench-apiserver fuzz clean

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -m venv $(VENV) || { echo "python3 -m venv failed; installing python3-venv"; \
	  apt-get update -qq && apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	@# PyPI's `validators` as a wheel: the packaging test installs it beside jobguard's, offline.
	$(BIN)/python -m pip download -q --no-deps -c constraints.txt -d $(VENV)/wheels validators
	@touch $(STAMP)

venv: $(STAMP)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: venv
	$(BIN)/mypy

# The fast loop: everything but the tests that start real servers or build wheels (marker slow)
# and the real-control-plane suite.
unit: venv
	$(BIN)/pytest -q -n 2 --dist worksteal -m "not slow and not controlplane"

# Every test but the real-control-plane suite.
unit-all: venv
	$(BIN)/pytest -q -n 2 --dist worksteal -m "not controlplane"

# etcd, kube-apiserver and kube-controller-manager, built from the Go module proxy into
# ~/.cache/jobguard/controlplane (once per module hash; KUBERNETES_VERSION=1.36.3 for another).
controlplane:
	@bash controlplane/build.sh

# The suite against the real control plane, serially: its tests register cluster-wide webhooks.
realapi: venv
	@bin=$$(bash controlplane/build.sh) || { echo "realapi: the control plane could not be built (above)"; exit 1; }; \
	  JOBGUARD_CONTROLPLANE_BIN=$$bin $(BIN)/pytest -q -m controlplane tests/realapi

# The two suites side by side: the real-control-plane one mostly waits on its servers.
test: lint typecheck
	$(MAKE) --no-print-directory -j2 --output-sync=target unit-all realapi

# A local control plane with jobguard registered (CONFIG=FILE; default the Kueue set-up), left
# running until `make cluster-down`; kubeconfig in .cluster/kubeconfig.
CONFIG ?= examples/config/kueue.yaml
CLUSTER_DIR ?= .cluster
cluster: venv
	$(BIN)/python -m tests.controlplane up --config $(CONFIG) --dir $(CLUSTER_DIR)

cluster-down: venv
	$(BIN)/python -m tests.controlplane down --dir $(CLUSTER_DIR)

# The rule reference and README.md's rule table, generated from jobguard/validators/catalog.py; docs/VAP.md's comparison table, from the policy cases.
docs: venv
	$(BIN)/jobguard rules --markdown > docs/RULES.md.tmp && mv docs/RULES.md.tmp docs/RULES.md
	$(BIN)/python -m jobguard.app.cli.rules_doc README.md
	$(BIN)/python -m tests.vap_cases
	$(BIN)/python scripts/pin_hook.py

$(DEV_CERTS)/tls.crt: | venv
	$(BIN)/jobguard certs generate --service jobguard --namespace jobguard --dev --out-dir $(DEV_CERTS) >/dev/null

certs: $(DEV_CERTS)/tls.crt

run: venv certs
	$(BIN)/jobguard serve --host 127.0.0.1 --port 8443 \
	  --tls-cert-file $(DEV_CERTS)/tls.crt --tls-private-key-file $(DEV_CERTS)/tls.key

# Records go to bench/results.
HTTP_TOOLS := command -v wrk >/dev/null && command -v hey >/dev/null || \
	  { apt-get update -qq && apt-get install -y -qq wrk hey; }

bench: venv
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev,bench]'
	$(BIN)/python -m bench.bench_validate
	$(BIN)/python -m bench.bench_check
	@$(HTTP_TOOLS)
	$(BIN)/python -m bench.bench_http --results-dir bench/results

# The webhook over TLS with wrk and hey (Debian packages), beside a bare ASGI floor.
bench-http: venv
	@$(HTTP_TOOLS)
	$(BIN)/python -m bench.bench_http --results-dir bench/results

# Job creates through the real API server, with and without jobguard: its share of the latency.
bench-apiserver: venv
	$(BIN)/python -m bench.bench_apiserver

# A long fuzzing campaign (the suite runs a bounded one).
fuzz: venv
	JOBGUARD_FUZZ_EXAMPLES=20000 $(BIN)/pytest -q tests/test_fuzz.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build
