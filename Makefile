# Corkboard. `make test` installs what the tests need, then runs every test.
GO        ?= go
AISDK_DIR := .cache/aisdk
STATICCHECK_VERSION := v0.8.2

.PHONY: all run build test test-go deps deps-ai lint fmt bench fuzz clean

all: build

build:
	$(GO) build ./...

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

# test runs every test with -race. The spec's largest push (500 notes of
# 30,000 four-byte characters, 60 MB) takes minutes under the race detector,
# so that one test also runs once without it.
test: deps
	$(GO) vet ./...
	CORKBOARD_AI_SDK_DIR=$(CURDIR)/$(AISDK_DIR) $(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run 'TestLargestPushIsAccepted' ./transport/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

clean:
	rm -rf .cache
