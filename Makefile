# triad: `make run` starts the server in dev mode, `make test` runs every check CI runs.
SHELL := /bin/bash
GO    ?= go
SQLC  := $(GO) tool -modfile=tools/sqlc/go.mod sqlc
DATA_DIR ?= ./var
NPM_BIN := node_modules/.bin

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: deps-postgres
deps-postgres: ## install PostgreSQL server binaries from Debian when missing (as root)
	@bash scripts/ensure-postgres.sh

.PHONY: deps-npm
deps-npm: node_modules/.installed ## install the pinned npm tools (spectral, redocly, prism, ts)

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: generate
generate: ## regenerate gen/ from api/*.yaml (oapi-codegen) and db/ (sqlc)
	$(GO) generate ./gen/...
	$(SQLC) generate

.PHONY: check-generated
check-generated: ## regenerate and fail if gen/ differs from what is committed
	@$(MAKE) --no-print-directory generate
	@if ! git diff --quiet --exit-code -- gen/ || [ -n "$$(git ls-files --others --exclude-standard gen/)" ]; then \
		echo "gen/ is stale: run 'make generate' and commit the result"; git status --short gen/; git diff --stat -- gen/; exit 1; fi
	@$(GO) mod tidy -diff

.PHONY: build
build: ## build bin/server
	$(GO) build -o bin/server ./cmd/server

.PHONY: run
run: deps-postgres build ## run the server in dev mode with a managed PostgreSQL under DATA_DIR
	./bin/server -mode dev -data-dir $(DATA_DIR)

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/') 2>/dev/null); if [ -n "$$out" ]; then echo "not gofmt-ed:"; echo "$$out"; exit 1; fi

.PHONY: sqlc-check
sqlc-check:
	$(SQLC) compile
	$(SQLC) vet

.PHONY: test
test: deps-postgres check-generated fmt-check sqlc-check ## every check: generated code, gofmt, vet, sqlc, go test -race
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 12m ./...

.PHONY: lint
lint: deps-npm fmt-check sqlc-check ## go vet, gofmt, sqlc vet and the spec linters (Spectral, Redocly)
	$(GO) vet ./...
	$(NPM_BIN)/spectral lint --fail-severity=warn --ruleset .spectral.yaml api/auth.yaml api/brands.yaml api/orders.yaml
	$(NPM_BIN)/redocly lint --config redocly.yaml api/auth.yaml api/brands.yaml api/orders.yaml

.PHONY: bench
bench: deps-postgres build ## Go benchmarks and a wrk load run, each beside a same-run baseline
	bash scripts/bench.sh

.PHONY: clean
clean: ## remove build output (keeps DATA_DIR)
	rm -rf bin
