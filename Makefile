# One entry point for humans and CI. Only python3 is needed on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two stamps: the program alone (install, demo) and the program plus the test extras
# (pytest, hypothesis, scikit-learn, ruff, mypy) for test and lint.
STAMP  := $(VENV)/.installed-stamp
TSTAMP := $(VENV)/.test-stamp
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: install demo test test-slow lint format bench bench-10x fuzz clean tidecv-oracle \
	xtcocotools-oracle ultralytics-oracle report-check docs cli-reference

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -e .
	touch $(STAMP)

$(TSTAMP): $(STAMP)
	$(PIP) install -e '.[test]'
	touch $(TSTAMP)

install: $(STAMP)

# Test-only oracle: the reference TIDE (tidecv, PyPI) outside the package's dependencies. Its
# own requirements are plotting libraries (OpenCV, matplotlib, seaborn) that the numbers never
# touch, so it is installed without them; tests/oracle/tide_harness.py runs it in a child.
TIDECV := $(VENV)/.tidecv-stamp
$(TIDECV): $(STAMP)
	$(PIP) install --no-deps --target $(VENV)/tidecv-oracle tidecv==1.0.1 appdirs==1.4.4
	touch $@

tidecv-oracle: $(TIDECV)

# Test-only oracle: xtcocotools (PyPI) for keypoint OKS with custom K and sigmas. Its wheels
# are built against NumPy 1.x, so it gets its own small venv (tests run it in a child).
XTCOCO := $(VENV)/.xtcocotools-stamp
$(XTCOCO): $(STAMP)
	test -x $(VENV)/xtcocotools-oracle/bin/python || $(PYTHON) -m venv $(VENV)/xtcocotools-oracle
	$(VENV)/xtcocotools-oracle/bin/python -m pip --disable-pip-version-check -q install 'numpy<2' xtcocotools==1.14.3
	touch $@

xtcocotools-oracle: $(XTCOCO)
# Test-only oracle: Ultralytics' own validation metrics (tests/oracle/ultralytics_harness.py
# runs them in a child). torch only from the CPU wheel shipped on the machine (PyPI's torch
# pulls CUDA); both without dependencies (the metrics need only what the test extra brings).
# Without the wheel the oracle test skips and says why.
TORCH_WHEEL ?= $(firstword $(wildcard /opt/wheels/torch-*+cpu-cp311-*.whl))
ULTRA := $(VENV)/.ultralytics-stamp
$(ULTRA): $(STAMP)
	@if [ -n "$(TORCH_WHEEL)" ]; then \
		$(PIP) install --no-deps --target $(VENV)/ultralytics-oracle $(TORCH_WHEEL) ultralytics==8.4.190; \
	else echo "make ultralytics-oracle: no CPU torch wheel in /opt/wheels; the oracle test will skip"; fi
	touch $@

ultralytics-oracle: $(ULTRA)

demo: $(STAMP)
	$(BIN)/iou-eval sample_data/coco/preds.json sample_data/coco/gt.json --per-class -o table

# The fast suite on every core (pytest-xdist; about a minute on 2 cores); tests marked slow
# (long fuzz and scale) run in test-slow.
test: $(TSTAMP) $(TIDECV) $(XTCOCO) $(ULTRA)
	$(BIN)/python -m pytest -m "not slow" -n auto

# Ray and PySpark for the slow suite's cluster tests (tests/distributed); a failed install
# leaves them out and the tests say so (skipped with the reason)
DISTSTAMP := $(VENV)/.distributed-stamp
$(DISTSTAMP): $(TSTAMP)
	$(PIP) install -e '.[distributed]' && touch $@ || \
		echo "make test-slow: ray/pyspark do not install here; their tests skip (with the reason)"

test-slow: $(TSTAMP) $(TIDECV) $(XTCOCO) $(ULTRA) $(DISTSTAMP)
	$(BIN)/python -m pytest -m slow -n auto

lint: $(TSTAMP)
	$(BIN)/ruff check iou_cli tests bench docs
	$(BIN)/ruff format --check iou_cli tests bench docs
	$(BIN)/mypy iou_cli tests
	$(BIN)/python docs/gen_cli_reference.py --check

format: $(TSTAMP)
	$(BIN)/ruff format iou_cli tests bench docs
	$(BIN)/ruff check --fix iou_cli tests bench docs

# The documentation site (mkdocs-material, the `docs` extra) into build/site; --strict turns a
# broken link, anchor, page or docstring reference into an error. docs/cli.md is generated from
# the program's --help (`make cli-reference`; `make lint` fails when it is stale). Not --quiet:
# it hides the warnings, and --strict then has nothing to fail on.
DSTAMP := $(VENV)/.docs-stamp
$(DSTAMP): $(STAMP)
	$(PIP) install -e '.[docs]'
	touch $@

docs: $(DSTAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

cli-reference: $(STAMP)
	$(BIN)/python docs/gen_cli_reference.py

# Benchmark-only anchors (never runtime dependencies).
$(VENV)/.bench-stamp: $(STAMP)
	$(PIP) install -e '.[fast-png,jit]' faster-coco-eval hotcoco shapely
	touch $@

bench: $(VENV)/.bench-stamp
	$(BIN)/python bench/iou_matrix.py
	$(BIN)/python bench/run.py --scale 1
	$(BIN)/python bench/run.py --scale 1 --iou-type segm --tools iou-eval,pycocotools,faster-coco-eval,hotcoco,hotcoco-1t,iou-eval-jobs
	$(BIN)/python bench/run.py --scale 1 --iou-type keypoints --tools iou-eval,pycocotools,faster-coco-eval,hotcoco,hotcoco-1t,iou-eval-jobs
	$(BIN)/python bench/run.py --scale 1 --tools iou-eval,iou-eval+analyses
	$(BIN)/python bench/lvis_bench.py
	$(BIN)/python bench/compare.py
	$(BIN)/python bench/panoptic_bench.py
	$(BIN)/python bench/obb_bench.py
	$(BIN)/python bench/dropin_bench.py
	$(BIN)/python bench/jobs.py --scale 10

bench-10x: $(VENV)/.bench-stamp
	$(BIN)/python bench/run.py --scale 10

# Long campaigns: hypothesis mutation fuzzers (tests marked fuzz; `make test` runs them short),
# 1000 random COCO scenes against pycocotools, 1000 TIDE scenes against tidecv, 300 federated
# scenes against lvis-api, then coverage-guided atheris when it installs.
fuzz: $(TSTAMP) $(TIDECV)
	IOU_EVAL_FUZZ_EXAMPLES=5000 $(BIN)/python -m pytest tests -m fuzz -p no:cacheprovider
	IOU_EVAL_DIFF_SEEDS=1000 $(BIN)/python -m pytest tests/oracle/test_coco_random.py -p no:cacheprovider
	IOU_EVAL_TIDE_SCENES=1000 $(BIN)/python -m pytest tests/oracle/test_tide_oracle.py -p no:cacheprovider
	IOU_EVAL_LVIS_SEEDS=300 $(BIN)/python -m pytest tests/oracle/test_lvis_oracle.py -p no:cacheprovider
	@if $(PIP) install atheris; then \
		$(BIN)/python tests/robust/atheris_loaders.py -atheris_runs=50000; \
	else echo "make fuzz: atheris does not install here; coverage-guided step skipped"; fi

# The sample HTML report rendered in a real browser (headless chromium, installed with apt
# when missing and we are root); fails when the screenshot is blank or the figures are missing.
report-check: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else echo "make report-check: install chromium first (apt-get install chromium)"; exit 2; fi
	mkdir -p build
	$(BIN)/iou-eval sample_data/coco/preds.json sample_data/coco/gt.json -q -o json \
		--report build/sample_report.html > /dev/null
	$(BIN)/python -m tests.browser build/sample_report.html build/sample_report.png 2400
	$(BIN)/iou-eval sample_data/keypoints/coco/preds.json sample_data/keypoints/coco/gt.json \
		--iou-type keypoints --per-keypoint -q -o json --report build/keypoint_report.html > /dev/null
	$(BIN)/python -m tests.browser build/keypoint_report.html build/keypoint_report.png 2800
	@echo "make report-check: look at build/sample_report.png and build/keypoint_report.png"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis bench/_data bench/_out
