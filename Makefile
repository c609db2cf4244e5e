# Corkboard. `make test` installs what the tests need, then runs every test.
# The product is this module; the tools that measure or break it (load,
# chaos, large reads) are the module in tools/ (docs/architecture.md, "The
# product and the tools"): every target that builds, vets or tests covers
# both, the tools' commands running inside tools/.
GO        ?= go
TOOLS     := tools
AISDK_DIR := .cache/aisdk
CHROMIUM  ?= /usr/bin/chromium
FIREFOX   ?= /usr/bin/firefox-esr
E2E_BIN   := $(CURDIR)/.cache/corkboard-e2e
FAKEOLLAMA_BIN := $(CURDIR)/.cache/corkboard-fakeollama
STATICCHECK_VERSION := v0.8.2
GOCYCLO_VERSION := v0.6.0

.PHONY: all run build pg test test-go test-web deps deps-ai deps-web chromium firefox web check-web-dist screenshots perf-web lint cyclo cross stress fmt bench fuzz clean chaos

all: build

build:
	$(GO) build ./...
	cd $(TOOLS) && $(GO) build ./...

run:
	$(GO) run ./cmd/corkboard

# deps installs what the tests need beyond Go: the AI SDK (its own stream
# parser checks our chat streams) into a folder git ignores.
deps: deps-ai

deps-ai:
	@if command -v npm >/dev/null 2>&1; then \
		if [ ! -d $(AISDK_DIR)/node_modules/ai ]; then \
			mkdir -p $(AISDK_DIR) && npm install --silent --no-audit --no-fund --prefix $(AISDK_DIR) ai@6.0.323; \
		fi; \
	else echo "npm not found: the AI SDK stream check will be skipped"; fi

# pg makes sure the local PostgreSQL the persist/postgres tests use is up
# (they create and drop databases of their own on it, and fail without it).
# As root it starts the cluster when it is down; otherwise it says how.
# CORKBOARD_TEST_PG=skip skips those tests, and this check, on purpose.
PG_HOST ?= 127.0.0.1
PG_PORT ?= 5432

pg:
	@if [ "$$CORKBOARD_TEST_PG" = skip ]; then echo "CORKBOARD_TEST_PG=skip: the PostgreSQL tests will be skipped"; exit 0; fi; \
	if [ -n "$$CORKBOARD_TEST_PG_DSN" ] || pg_isready -q -h $(PG_HOST) -p $(PG_PORT) 2>/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null 2>&1; then \
		ver=$$(ls /etc/postgresql | sort -V | tail -n 1); \
		echo "starting PostgreSQL $$ver"; \
		pg_ctlcluster --skip-systemctl-redirect $$ver main start; \
		for i in $$(seq 30); do pg_isready -q -h $(PG_HOST) -p $(PG_PORT) && exit 0; sleep 1; done; \
		echo "PostgreSQL $$ver did not come up: see /var/log/postgresql/"; exit 1; \
	fi; \
	echo "PostgreSQL is not answering on $(PG_HOST):$(PG_PORT); the persist/postgres tests need it."; \
	echo "  start it:  sudo pg_ctlcluster --skip-systemctl-redirect \$$(ls /etc/postgresql) main start"; \
	echo "  or point CORKBOARD_TEST_PG_DSN at a server where you may create databases,"; \
	echo "  or skip those tests: make test CORKBOARD_TEST_PG=skip"; \
	exit 1

# test runs every test with -race. The spec's largest push (500 notes of
# 30,000 four-byte characters, 60 MB) takes minutes under the race detector,
# so that one test also runs once without it.
test: deps pg
	$(GO) vet ./...
	cd $(TOOLS) && $(GO) vet ./...
	CORKBOARD_AI_SDK_DIR=$(CURDIR)/$(AISDK_DIR) $(GO) test -race -count=1 -timeout 20m ./...
	cd $(TOOLS) && $(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run 'TestLargestPushIsAccepted' ./transport/
	$(MAKE) test-web

# chaos is the long chaos run (docs/chaos.md): 5 minutes of faults, with
# PostgreSQL restarts (as root; they disturb anything else using the server);
# then the converge workload (issue 20) for 3 minutes on bbolt, kill -9 of
# the server, and 3 minutes on three PostgreSQL nodes, kill -9 of one.
chaos: pg
	cd $(TOOLS) && $(GO) run ./corkboard-chaos -duration 5m -pg-restart
	cd $(TOOLS) && $(GO) run ./corkboard-chaos -workload converge -backend bolt -duration 3m
	cd $(TOOLS) && $(GO) run ./corkboard-chaos -workload converge -backend pg -duration 3m

# deps-web installs the web client's exact dependencies (package-lock.json)
# when they are missing or older than the lock file.
deps-web:
	@if [ ! -f web/node_modules/.package-lock.json ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then \
		cd web && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund; \
	fi

# chromium installs Debian's Chromium for the end-to-end tests when it is
# missing and we are root (CI); never a downloaded browser.
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y chromium; \
		else echo "chromium not found and not root: the end-to-end tests will be skipped"; fi; \
	fi

# firefox installs Debian's Firefox ESR for the Firefox end-to-end tests
# (e2e/firefox.test.mjs, driven by puppeteer-core over WebDriver BiDi) when
# it is missing and we are root (CI); never a downloaded browser.
firefox:
	@if [ ! -x $(FIREFOX) ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y firefox-esr; \
		else echo "firefox-esr not found and not root: the Firefox end-to-end tests will be skipped"; fi; \
	fi

# web rebuilds the committed client build in web/dist (embedded by go:embed).
web: deps-web
	cd web && npm run build

# check-web-dist rebuilds the client and fails if the committed build differs.
check-web-dist: web
	@git diff --exit-code --stat -- web/dist || { echo "web/dist is not the build of web/src: run make web and commit"; exit 1; }
	@if [ -n "$$(git status --porcelain -- web/dist)" ]; then git status --short -- web/dist; echo "web/dist has files that are not committed: run make web and commit"; exit 1; fi

# test-web: unit tests (vitest), the committed build check, then the
# end-to-end tests (playwright-core + Debian's Chromium, puppeteer-core +
# Debian's Firefox ESR) against the real binary.
test-web: deps-web chromium firefox pg
	cd web && npx vitest run
	$(MAKE) check-web-dist
	$(GO) build -o $(E2E_BIN) ./cmd/corkboard
	$(GO) build -o $(FAKEOLLAMA_BIN) ./cmd/corkboard-fakeollama
	cd web && CORKBOARD_BIN=$(E2E_BIN) CORKBOARD_FAKEOLLAMA_BIN=$(FAKEOLLAMA_BIN) CHROMIUM=$(CHROMIUM) FIREFOX=$(FIREFOX) node --test --test-concurrency=1 e2e/

lint: cross cyclo
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	cd $(TOOLS) && $(GO) vet ./...
	cd $(TOOLS) && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# cyclo fails on any function of the product (every Go file outside the
# tools module, tests included) above cyclomatic complexity 20: past it a
# function does several things, and is split by responsibility instead.
cyclo:
	$(GO) run github.com/fzipp/gocyclo/cmd/gocyclo@$(GOCYCLO_VERSION) -over 20 $$(git ls-files '*.go' | grep -v '^$(TOOLS)/')

# cross builds and vets (tests included) for the other platforms self-hosters
# run: platform code sits behind build tags (internal/livesock/*_linux.go,
# tools/corkboard-load/sys_unix.go), and a tag left off breaks only there.
CROSS_PLATFORMS ?= windows/amd64 darwin/arm64 darwin/amd64 linux/arm64 freebsd/amd64

cross:
	@set -e; for p in $(CROSS_PLATFORMS); do \
		echo "cross: GOOS=$${p%/*} GOARCH=$${p#*/} go build, go vet"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./...; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./...; \
		(cd $(TOOLS) && GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./... && GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./...); \
	done

# stress runs the concurrency-sensitive tests STRESS_COUNT times each,
# without and with -race, to catch the failure one run in a hundred shows:
# rooms and hub whole, the live WebSocket endpoint, the socket engine whole,
# the store contract's concurrent writers on bbolt (group commit). For a
# flaky test, run it alone with a higher count while another core is busy, e.g.
# make stress STRESS_COUNT=200. The default takes about ten minutes on two
# busy cores, most of it the live endpoint's tests under -race.
STRESS_COUNT ?= 20
STRESS_TRANSPORT := TestLive|TestLongPoll
STRESS_PERSIST := TestContract/.*/([Cc]oncurrent|AtOnce|InOrder|Race|EveryTry)

stress:
	@set -e; for race in "" -race; do \
		echo "stress: -count=$(STRESS_COUNT) $$race"; \
		$(GO) test $$race -count=$(STRESS_COUNT) -timeout 60m ./rooms/ ./hub/; \
		$(GO) test $$race -count=$(STRESS_COUNT) -timeout 60m -run '$(STRESS_TRANSPORT)' ./transport/; \
		$(GO) test $$race -count=$(STRESS_COUNT) -timeout 60m ./internal/livesock/; \
		$(GO) test $$race -count=$(STRESS_COUNT) -timeout 60m -run '$(STRESS_PERSIST)' ./persist/bolt/; \
	done

fmt:
	gofmt -w $$(git ls-files '*.go')

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	cd $(TOOLS) && $(GO) test -run='^$$' -bench=. -benchmem ./...

# fuzz runs every fuzz target of the product for FUZZTIME each (go test
# fuzzes one target per run); the seed corpora run in make test anyway.
FUZZTIME ?= 10s
fuzz:
	@set -e; for f in $$(git grep -l '^func Fuzz' -- '*_test.go' ':!tools/'); do \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "fuzz $$t ($$(dirname $$f), $(FUZZTIME))"; \
	    $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) ./$$(dirname $$f)/; \
	  done; \
	done

clean:
	rm -rf .cache

# screenshots runs the e2e tests and saves the main screens to docs/screenshots/.
screenshots: web
	$(GO) build -o $(E2E_BIN) ./cmd/corkboard
	$(GO) build -o $(FAKEOLLAMA_BIN) ./cmd/corkboard-fakeollama
	cd web && SCREENSHOTS=1 CORKBOARD_BIN=$(E2E_BIN) CORKBOARD_FAKEOLLAMA_BIN=$(FAKEOLLAMA_BIN) CHROMIUM=$(CHROMIUM) FIREFOX=$(FIREFOX) node --test --test-concurrency=1 e2e/

# perf-web measures the client (open a 2,000-note board, pan fps, bundle
# size) in headless Chromium; record the figures in docs/benchmarks.md.
perf-web: web
	$(GO) build -o $(E2E_BIN) ./cmd/corkboard
	$(GO) build -o $(FAKEOLLAMA_BIN) ./cmd/corkboard-fakeollama
	cd web && CORKBOARD_BIN=$(E2E_BIN) CORKBOARD_FAKEOLLAMA_BIN=$(FAKEOLLAMA_BIN) CHROMIUM=$(CHROMIUM) node perf/perf.mjs
