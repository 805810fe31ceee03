# Concord: `make run` starts the demo on SQLite; `make test` runs every test on PostgreSQL + Redis.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DATABASE_URL_TEST ?= postgres://postgres@127.0.0.1:5432/concord
export REDIS_URL_TEST ?= redis://127.0.0.1:6379/0
export CACHE_URL_TEST ?= redis://127.0.0.1:6379/1

.PHONY: run setup messages demo test test-fast services bench bench-capacity bench-scale soak lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## The Chinese interface: .mo files are build output (gitignored), compiled from the .po catalogs
## with GNU gettext's msgfmt (Debian/Ubuntu: apt-get install gettext).
PO := $(wildcard locale/*/LC_MESSAGES/django.po)
MO := $(PO:.po=.mo)
%.mo: %.po $(STAMP)
	DEBUG=1 $(BIN)/python manage.py compilemessages --ignore='.venv/*' --ignore='var/*'

## This checkout's SECRET_KEY, so `.venv/bin/python manage.py …` runs as printed without DEBUG=1:
## written once to var/dev-secret-key (under CONCORD_VAR_DIR if set; git-ignored), never over an
## existing file. SECRET_KEY from the environment or .env wins; production must set it.
LOCAL_SECRET_KEY := $(or $(CONCORD_VAR_DIR),var)/dev-secret-key
$(LOCAL_SECRET_KEY): | $(STAMP)
	mkdir -p $(@D)
	$(BIN)/python -c 'import os, secrets, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600); os.write(fd, secrets.token_urlsafe(50).encode())' $@

setup: $(STAMP) $(MO) $(LOCAL_SECRET_KEY)

## First command: install, migrate, load the study taxonomy and demo project, serve on :8000.
run: setup
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py setup_demo
	DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:8000

## Tests run in TEST_WORKERS pytest-xdist processes (one per core here), each with its own test
## database and Redis db indices (tests/conftest.py); a module's tests that share a module-scoped
## fixture (a browser, a private cluster) stay in one. TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= 2
PYTEST_XDIST := -n $(TEST_WORKERS) --dist loadgroup

## Second command: install, make sure PostgreSQL and Redis run, run the whole suite against them.
test: setup services
	DATABASE_URL=$(DATABASE_URL_TEST) REDIS_URL=$(REDIS_URL_TEST) CACHE_URL=$(CACHE_URL_TEST) \
	  $(BIN)/pytest $(PYTEST_XDIST) $(PYTEST_ARGS)

## The suite without the browser, worker, fault, load and slow tests (markers: tests/conftest.py,
## pyproject.toml). Under three minutes; CI (.ci/run) runs the whole `make test`.
test-fast: setup services
	DATABASE_URL=$(DATABASE_URL_TEST) REDIS_URL=$(REDIS_URL_TEST) CACHE_URL=$(CACHE_URL_TEST) \
	  $(BIN)/pytest $(PYTEST_XDIST) -m "not browser and not worker and not fault and not load and not slow" $(PYTEST_ARGS)

## After changing a translatable string: refresh the catalog, then translate what it marks new.
messages: setup
	DEBUG=1 $(BIN)/python manage.py makemessages -l zh_Hans --no-obsolete --extension html,txt,py,svg --ignore='.venv/*' --ignore='var/*' --ignore='tests/*'

services:
	@./scripts/ensure-services

## Benchmarks at study scale on PostgreSQL; prints medians.
bench: setup services
	DATABASE_URL=$${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench} \
	  $(BIN)/python -m tests.bench.run
	DATABASE_URL=$${BENCH_HARVEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_harvest} \
	  $(BIN)/python -m tests.bench.harvest
	DATABASE_URL=$${BENCH_LABELING_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_labeling} \
	  $(BIN)/python -m tests.bench.labeling
	DATABASE_URL=$${BENCH_BROWSER_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_labeling_browser} \
	  $(BIN)/python -m tests.bench.labeling_browser
	DATABASE_URL=$${BENCH_EXPORTS_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_exports} \
	  $(BIN)/python -m tests.bench.exports
	DATABASE_URL=$${BENCH_REPORTS_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_reports} \
	  $(BIN)/python -m tests.bench.reports
	DATABASE_URL=$${BENCH_ITEM_IMPORTS_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_item_imports} \
	  $(BIN)/python -m tests.bench.item_imports
	DATABASE_URL=$${BENCH_DUPLICATES_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_duplicates} \
	  $(BIN)/python -m tests.bench.duplicates
	DATABASE_URL=$${BENCH_PACKAGE_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_package} \
	  $(BIN)/python -m tests.bench.package
	$(MAKE) bench-capacity

## Volunteers with no think time against gunicorn + a Celery worker: labels/s, latency, PostgreSQL
## CPU per label, memory. CAPACITY_ARGS="--state steady bulk late --runs 3" for the whole set.
bench-capacity: setup services
	DATABASE_URL=$${BENCH_CAPACITY_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_capacity} \
	  $(BIN)/python -m tests.bench.capacity $(CAPACITY_ARGS)

## Ten times the study (387,420 issues, 2.7 M labels; tests.bench.study10x writes it): every figure of
## issue #31 against its target, medians of 3. SCALE_ARGS="--scale 0.05 --runs 1" to try it out.
bench-scale: setup services
	DATABASE_URL=$${BENCH_SCALE_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_scale} \
	  $(BIN)/python -m tests.bench.scale $(SCALE_ARGS)

## Load test with faults: 50 volunteers for 10 minutes, gunicorn workers killed, Redis restarted.
soak: setup services
	DATABASE_URL=$${BENCH_LABELING_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/concord_bench_labeling} \
	  $(BIN)/python -m tests.bench.soak $(SOAK_ARGS)

## Style and shape: ruff's lint and formatting, the import contracts and mypy (pyproject.toml).
## mypy's Django plugin loads concord.settings: DEBUG=1 lets them start without SECRET_KEY.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	DEBUG=1 $(BIN)/mypy

clean:
	rm -rf $(VENV) var/concord.sqlite3 var/staticfiles $(MO)
