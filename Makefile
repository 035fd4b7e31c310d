# coursepack: `make run` builds and packages the example course; `make test` runs the suite.
SWIFT ?= swift
RELEASE_BIN := .build/release/coursepack
EXAMPLE := examples/coursepack-101
EXAMPLE_OUT := out/example

.PHONY: run test build release templates clean bench bench-scale fuzz plugin-venv-test

# Only `coursepack` is needed here; `make release` builds the other two programs too.
run:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release --product coursepack
	$(RELEASE_BIN) build $(EXAMPLE) --out $(EXAMPLE_OUT) --report $(EXAMPLE_OUT).report.json
	@echo
	@echo "Bundles:  $(EXAMPLE_OUT)/<type>/<url_name>.zip"
	@echo "Files:    $(EXAMPLE_OUT)/files/<hh>/<sha256>[.gz] (each course file once)"
	@echo "Manifest: $(EXAMPLE_OUT)/manifest.json, split: $(EXAMPLE_OUT)/manifest-index.json + manifest/<sha256>.json"
	@echo "Report:   $(EXAMPLE_OUT).report.json"

release:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release --product coursepack
	$(SWIFT) build -c release --product coursepack-sync
	$(SWIFT) build -c release --product coursepack-device

build:
	@scripts/ensure-deps.sh
	$(SWIFT) build

test:
	@scripts/ensure-deps.sh --test
	$(SWIFT) build --build-tests
	$(SWIFT) test
	python3 -m pytest -q Tests/browser Tests/ci Tests/olx
	cd integrations/openedx && python3 -m pytest -q tests

# The Open edX plugin's tests in a fresh virtualenv holding only what `pip install -e
# 'integrations/openedx[test]'` brings from PyPI: proves the [test] extra is complete.
plugin-venv-test:
	@scripts/ensure-deps.sh --test
	$(SWIFT) build --product coursepack
	$(SWIFT) build --product coursepack-sync
	@scratch=$$(mktemp -d) && python3 -m venv $$scratch/venv && \
	$$scratch/venv/bin/pip install -q -e 'integrations/openedx[test]' && \
	(cd integrations/openedx && PATH=$$scratch/venv/bin:$$PATH CI=true $$scratch/venv/bin/python -m pytest -q tests); \
	status=$$?; rm -rf $$scratch; exit $$status

# Re-embed Templates/ into the binary after editing them (a test fails while they differ).
templates:
	python3 scripts/embed-templates.py

clean:
	rm -rf .build out

# Prints its own elapsed time, builds included (bench/run.py prints the measuring part's).
bench:
	@started=$$(date +%s) && scripts/ensure-deps.sh --bench && \
	$(SWIFT) build -c release --product coursepack && \
	$(SWIFT) build -c release --product coursepack-sync && \
	$(SWIFT) build -c release --product coursepack-bench && \
	python3 bench/run.py && \
	echo "make bench took $$(( $$(date +%s) - started )) s in all, release builds included"

# Issue 33's scale figures: the demo course x315 (about 100,000 blocks; SCALE_COPIES picks
# another count), built, rebuilt, edited and synced; writes bench/scale-results.json.
bench-scale:
	@scripts/ensure-deps.sh --bench
	$(SWIFT) build -c release --product coursepack
	$(SWIFT) build -c release --product coursepack-sync
	python3 bench/scale.py

# Runs each libFuzzer target for FUZZ_SECONDS (default 60); see scripts/fuzz.sh.
fuzz:
	@scripts/ensure-deps.sh
	scripts/fuzz.sh
