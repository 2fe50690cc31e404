# Bootstraps everything from python3: the venv, pinned packages (constraints.txt).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The compiled build (setup.py, mypyc) goes to a copy of the tree: the extension modules never
# sit beside the .py files one edits, where they would shadow them.
COMPILED := build/compiled
DEV_CERTS := certs/dev

.PHONY: venv test lint typecheck unit compiled unit-compiled docs run certs bench bench-http fuzz clean

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

unit: venv
	$(BIN)/pytest -q -n 2

# The tracked and new (not ignored) files, copied, then the rule library compiled in place.
compiled: venv
	rm -rf $(COMPILED) && mkdir -p $(COMPILED)
	git ls-files -co --exclude-standard \
	  | $(BIN)/python -c "import os, sys; print(*(p for p in sys.stdin.read().splitlines() if os.path.isfile(p)), sep='\n')" \
	  | tar -cf - -T - | tar -xf - -C $(COMPILED)
	cd $(COMPILED) && JOBGUARD_COMPILE=1 $(CURDIR)/$(BIN)/python setup.py -q build_ext --inplace 2>&1 \
	  | grep -v "Treating generator comprehension as list" || true
	@test -n "$$(ls $(COMPILED)/jobguard/validators/chain.*.so 2>/dev/null)" || \
	  { echo "the compiled build failed: no extension modules in $(COMPILED)"; exit 1; }

# The same suite against the compiled build.
unit-compiled: compiled
	cd $(COMPILED) && PYTHONPATH=$(CURDIR)/$(COMPILED) JOBGUARD_EXPECT_COMPILED=1 \
	  $(CURDIR)/$(BIN)/pytest -q -n 2 -p no:cacheprovider

test: lint typecheck unit unit-compiled

# The rule reference, README.md's rule table and the chart's copy of the catalogue, generated
# from jobguard/validators/catalog.py; docs/VAP.md's comparison table, from the policy cases.
docs: venv
	$(BIN)/jobguard rules --markdown > docs/RULES.md.tmp && mv docs/RULES.md.tmp docs/RULES.md
	$(BIN)/python -m jobguard.app.rules_doc README.md
	$(BIN)/python -m jobguard.app.webhooks charts/jobguard/files/rules.yaml
	$(BIN)/python -m tests.vap_cases

$(DEV_CERTS)/tls.crt: | venv
	$(BIN)/jobguard certs generate --service jobguard --namespace jobguard --dev --out-dir $(DEV_CERTS) >/dev/null

certs: $(DEV_CERTS)/tls.crt

run: venv certs
	$(BIN)/jobguard serve --host 127.0.0.1 --port 8443 \
	  --tls-cert-file $(DEV_CERTS)/tls.crt --tls-private-key-file $(DEV_CERTS)/tls.key

# The benchmarks measure the build the image ships: the compiled copy (bench/README.md says how
# to measure the Python build beside it). Records go to this tree's bench/results.
IN_COMPILED := cd $(COMPILED) && PYTHONPATH=$(CURDIR)/$(COMPILED) $(CURDIR)/$(BIN)/python
HTTP_TOOLS := command -v wrk >/dev/null && command -v hey >/dev/null || \
	  { apt-get update -qq && apt-get install -y -qq wrk hey; }

bench: compiled
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev,bench]'
	$(IN_COMPILED) -m bench.bench_validate
	$(IN_COMPILED) -m bench.bench_check
	@$(HTTP_TOOLS)
	$(IN_COMPILED) -m bench.bench_http --results-dir $(CURDIR)/bench/results

# The webhook over TLS with wrk and hey (Debian packages), beside a bare ASGI floor.
bench-http: compiled
	@$(HTTP_TOOLS)
	$(IN_COMPILED) -m bench.bench_http --results-dir $(CURDIR)/bench/results

# A long fuzzing campaign (the suite runs a bounded one).
fuzz: venv
	JOBGUARD_FUZZ_EXAMPLES=20000 $(BIN)/pytest -q tests/test_fuzz.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build
