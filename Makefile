# triad: `make run` starts the server in dev mode, `make test` runs every check CI runs.
SHELL := /bin/bash
GO    ?= go
SQLC  := $(GO) tool -modfile=tools/sqlc/go.mod sqlc
OASDIFF := $(GO) tool -modfile=tools/oasdiff/go.mod oasdiff
DATA_DIR ?= ./var
NPM_BIN := node_modules/.bin
# go test through cmd/testrun: one PostgreSQL and one build of the server for the whole run, the
# failures printed whole, the 10 slowest packages and tests at the end (docs/testing.md).
TESTRUN := $(GO) run ./cmd/testrun
# Packages tested side by side: most of the slow ones wait on servers, PostgreSQL and Node, not on
# the CPU, so more than go test's default of one per core.
TEST_PARALLEL ?= 4
# The surfaces: one per spec in api/ (api/embed.go's Names; docs/adding-a-surface.md).
SPECS   := $(sort $(patsubst api/%.yaml,%,$(wildcard api/*.yaml)))
# Build paths trimmed for every go command the Makefile runs: compiled packages are then cached
# under keys that do not name the checkout's folder, so a second clone or worktree of the same
# sources (CI's fresh clone on a machine that built them before, cmd/newsurface's copy) compiles
# nothing again. A GOFLAGS of the caller's comes after and wins.
export GOFLAGS := -trimpath $(GOFLAGS)
# The test targets link without DWARF (-ldflags=-w), which only a debugger reads: a third less CPU
# for each of make test's ~180 links (a race test binary of impl/ links in 2.4 s of CPU instead of
# 3.3 s), while panics' stack traces and the race detector's reports keep every function, file and
# line (they read the binary's pclntab, which -w keeps). make build keeps DWARF.
TEST_GOFLAGS := -ldflags=-w
test contract test-replicas fuzz-short: GOFLAGS += $(TEST_GOFLAGS)
# Keep Redocly CLI from phoning home (the network here reaches package registries only).
export REDOCLY_TELEMETRY := off
export REDOCLY_SUPPRESS_UPDATE_NOTICE := true

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: deps-postgres
deps-postgres: ## install PostgreSQL server binaries from Debian when missing (as root)
	@bash scripts/ensure-postgres.sh

.PHONY: deps-haproxy
deps-haproxy: ## install Debian's haproxy when missing (as root); the replica test and run-replicas put it in front
	@bash scripts/ensure-haproxy.sh

.PHONY: deps-pgbouncer
deps-pgbouncer: ## install Debian's pgbouncer when missing (as root); tests put it in front of PostgreSQL in transaction mode
	@bash scripts/ensure-pgbouncer.sh

.PHONY: deps-ha
deps-ha: ## install Debian's etcd-server, pgbackrest and Patroni's Python libraries when missing (as root) and fetch Debian trixie's Patroni 4.0.7 into var/patroni; make run-ha and make test-ha run them
	@bash scripts/ensure-ha.sh

.PHONY: deps-prometheus
deps-prometheus: ## install Debian's prometheus (for promtool) when missing (as root); make test checks deploy/monitoring's rules with it
	@bash scripts/ensure-prometheus.sh

.PHONY: monitoring-check
monitoring-check: deps-prometheus ## promtool check rules and test rules over deploy/monitoring, the PrometheusRule and PodMonitor, every dashboard query (part of make test's go test ./deploy)
	$(GO) test -count=1 -run '^(TestMonitoring_.*|TestMetricNames)$$' ./deploy/

.PHONY: deps-chromium
deps-chromium: ## install Debian's chromium when missing (as root); the auth browser test drives it
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then echo "installing chromium from Debian..."; \
			bash scripts/apt-update.sh && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else echo "chromium is missing: sudo apt-get install chromium" >&2; exit 1; fi; }

.PHONY: deps-npm
deps-npm: node_modules/.installed ## install the pinned npm tools (spectral, redocly, prism, ts)

# npm ci, or a copy of this machine's node_modules of the same package-lock.json (scripts/npm-install.sh).
node_modules/.installed: package.json package-lock.json
	@bash scripts/npm-install.sh
	@touch $@

.PHONY: generate
generate: ## regenerate gen/ from api/*.yaml (the bundles in gen/openapi, then oapi-codegen) and db/ (sqlc), and the TypeScript SDK types (make sdk)
	$(GO) generate ./gen/openapi
	$(GO) generate $(filter-out %/gen/openapi,$(shell $(GO) list ./gen/...))
	$(SQLC) generate
	@$(MAKE) --no-print-directory sdk

.PHONY: new-surface
new-surface: ## scaffold a surface NAME (TOKENS: the token source it accepts, orders) that builds, passes its tests and is served; then make generate (docs/adding-a-surface.md)
	@test -n "$(NAME)" || { echo "usage: make new-surface NAME=notes [TOKENS=orders]"; exit 2; }
	$(GO) run ./cmd/newsurface -name '$(NAME)' -tokens '$(or $(TOKENS),orders)'
	@$(MAKE) --no-print-directory generate

.PHONY: check-generated
check-generated: ## regenerate and fail if gen/ or clients/ts/*/schema.d.ts differ from what is committed
	@$(MAKE) --no-print-directory generate
	@if ! git diff --quiet --exit-code -- gen/ || [ -n "$$(git ls-files --others --exclude-standard gen/)" ]; then \
		echo "gen/ is stale: run 'make generate' and commit the result"; git status --short gen/; git diff --stat -- gen/; exit 1; fi
	@if ! git diff --quiet --exit-code -- 'clients/ts/*/schema.d.ts' || [ -n "$$(git ls-files --others --exclude-standard 'clients/ts/*/schema.d.ts')" ]; then \
		echo "clients/ts is stale: run 'make generate' (or 'make sdk') and commit the result"; git status --short clients/ts/; exit 1; fi
	@$(GO) mod tidy -diff

.PHONY: breaking
breaking: ## fail on a breaking change of a bundled spec against its last release (api/released/), naming it, unless info.version's major was raised and api/changelog/ names it (oasdiff, pinned in tools/oasdiff/go.mod)
	$(GO) run ./cmd/apichanges -oasdiff '$(OASDIFF)' breaking

.PHONY: release-specs
release-specs: ## release the specs: bundle api/ as written, raise each info.version (and the SDK's) as semver asks, write api/changelog/<surface>.md, copy the bundles to api/released/, then make generate; nothing to release changes nothing
	$(GO) run ./cmd/apichanges -oasdiff '$(OASDIFF)' release
	@$(MAKE) --no-print-directory generate

.PHONY: build
build: ## build bin/server
	$(GO) build -o bin/server ./cmd/server

.PHONY: run
run: deps-postgres build ## run the server in dev mode with a managed PostgreSQL under DATA_DIR
	./bin/server -mode dev -data-dir $(DATA_DIR)

.PHONY: run-replicas
run-replicas: deps-postgres deps-haproxy build ## one PostgreSQL, REPLICAS (3) dev-mode servers and HAProxy on :8080 (docs/replicas.md)
	bash scripts/run-replicas.sh

.PHONY: run-ha
run-ha: deps-postgres deps-haproxy deps-pgbouncer deps-ha build ## the HA stack (etcd, Patroni 4 over 3 PostgreSQL nodes with quorum commit, HAProxy, PgBouncer, pgBackRest) and REPLICAS (3) servers behind HAProxy on :8080 (docs/replicas.md)
	$(GO) run ./cmd/runha -replicas $(or $(REPLICAS),3) -port $(or $(PORT),8080)

.PHONY: test-ha
test-ha: deps-postgres deps-haproxy deps-pgbouncer deps-ha ## eight database faults under load (leader crash, switchover, primary restart, PgBouncer restart, postmaster kill, etcd majority loss, standby then leader, frozen primary) and a forced failover, then a point-in-time restore; prints the failover: and restore: lines (docs/replicas.md)
	$(GO) test -tags ha -count=1 -v -timeout 45m -run '^TestHA_' ./e2e/

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/') 2>/dev/null); if [ -n "$$out" ]; then echo "not gofmt-ed:"; echo "$$out"; exit 1; fi

.PHONY: sqlc-check
sqlc-check:
	$(SQLC) compile
	$(SQLC) vet

.PHONY: sdk
sdk: deps-npm ## regenerate the TypeScript SDK types clients/ts/<surface>/schema.d.ts from the bundled specs gen/openapi/*.yaml (openapi-typescript)
	@for s in $(SPECS); do \
		$(NPM_BIN)/openapi-typescript gen/openapi/$$s.yaml --redocly clients/ts/redocly.yaml -o clients/ts/$$s/schema.d.ts >/dev/null || exit 1; done

.PHONY: check-sdk
check-sdk: deps-npm ## type-check the TypeScript SDK and its tests (tsc, strict); freshness is check-generated's
	$(NPM_BIN)/tsc -p clients/ts

.PHONY: sdk-pack
sdk-pack: deps-postgres deps-npm ## npm pack the TypeScript SDK, install the tarball in a scratch app, type-check it and call a server (part of make test's go test ./e2e)
	$(GO) test -count=1 -run '^TestSDKPackage$$' ./e2e/

.PHONY: sdk-mock
sdk-mock: deps-npm ## run the TypeScript SDK's tests against make mock (Prism serving the spec examples) instead of a server; docs/specs.md lists what differs (part of make test's go test ./e2e)
	$(GO) test -count=1 -run '^TestTypeScriptSDK_AgainstMock$$' ./e2e/

# The suites `make contract BASE_URL=...` runs against a server already running: those that need
# nothing but its API and accounts the TRIAD_E2E_* variables name (dev mode's by default), on all
# three surfaces; not the brands journey over dev-mode brands, auth's dev OAuth 2.0 provider, or the
# SDK suites, which start servers with their own flags. docs/specs.md, "Checking a running deployment".
CONTRACT_REMOTE := ^(TestSpecs_ServedAsInTheRepository|TestOrders_.*|TestBrands_(LogoutEndsEveryToken|AdminThroughGeneratedClient)|TestAuth_DirectLoginThroughGeneratedClient)$$

# The end-to-end tests that are the same in every mode: they start no server through the harness's
# startServer (they run make mock, a server of their own, or none), so neither a balancer nor Prism
# comes between them and what they test. go test -race ./... has run them; make test-replicas and
# make contract leave them out. TestMake_ModeListsHold checks both lists against the tests.
E2E_SAME_IN_EVERY_MODE := TestTypeScriptSDK_AgainstMock|TestMake_MockServesTheSpecExamples|TestMake_AuthMockCarriesItsCookies|TestDeprecation_SDKTypesMarkIt|TestDevMode_AnyPortWithoutAuthURL|TestMake_ModeListsHold
# The end-to-end tests whose behaviour a balancer over three replicas does not change: a client's
# view of one request at a time (the SDKs, the recipes, the money format, the served specs, the
# refusals) or one server's own limits (a timed fairness measure). go test -race ./... has run them
# against one server; make test-replicas leaves them out and runs the rest, the tests of state
# shared between replicas (tokens, sessions, logins, idempotency, concurrent writes) among them.
E2E_SAME_BEHIND_A_BALANCER := TestTypeScriptSDK|TestSDKCrossOrigin|TestSDKReadme|TestSDKPackage|TestGeneratedClients_MoneyIsExact|TestGoDecimalRecipe|TestGoClientRecipe|TestSpecs_ServedAsInTheRepository|TestOrders_RefusalsThroughGeneratedClient|TestHostileOrders_DeepPagesStarveNoOne
# The end-to-end tests that start their server without Prism proxies (startServer without surfaces:
# they talk to the server itself), so in make contract they would send go test -race ./...'s
# requests again to a server built without -race (TestSDKPackage among them: it proves the package;
# its calls through Prism are TestTypeScriptSDK's); make contract leaves them out. Behind a balancer
# (make test-replicas) they do run: there the balancer is in between.
E2E_WITHOUT_PRISM := TestGeneratedClients_MoneyIsExact|TestGoDecimalRecipe|TestGoClientRecipe|TestSDKCrossOrigin|TestSDKReadme|TestSDKPackage|TestSpecs_ServedAsInTheRepository

.PHONY: contract
contract: deps-npm $(if $(BASE_URL),,deps-postgres) ## replay the end-to-end suites through Prism validating proxies (--errors); BASE_URL=<url>: against that running server
ifeq ($(BASE_URL),)
	TRIAD_E2E_PRISM=1 $(TESTRUN) -- -count=1 -timeout 10m -skip '^($(E2E_SAME_IN_EVERY_MODE)|$(E2E_WITHOUT_PRISM))$$' ./e2e/
else
	TRIAD_E2E_BASE_URL=$(BASE_URL) $(GO) test -count=1 -timeout 10m -v -run '$(CONTRACT_REMOTE)' ./e2e/
endif

.PHONY: contract-remote-check
contract-remote-check: deps-postgres deps-npm ## run make contract BASE_URL= against a dev server of its own and check that the remote suites passed there (not part of make test: a suite inside a suite)
	$(GO) test -tags contractremote -count=1 -timeout 15m -run '^TestMake_ContractAgainstARunningServer$$' ./e2e/

.PHONY: mock
mock: deps-npm ## serve each spec's examples with Prism in mock mode, each on its info.x-mock-port (orders :4010, brands :4011, auth :4012; MOCK_HOST, MOCK_<SPEC>_PORT, MOCK_SPECS)
	@bash scripts/mock.sh

.PHONY: test-replicas
test-replicas: deps-postgres deps-haproxy deps-pgbouncer deps-npm ## the end-to-end suites a balancer changes, through HAProxy over three servers on one database
	TRIAD_E2E_REPLICAS=3 $(TESTRUN) -- -tags replicas -count=1 -timeout 15m -skip '^($(E2E_SAME_IN_EVERY_MODE)|$(E2E_SAME_BEHIND_A_BALANCER))$$' ./e2e/

.PHONY: test
# The checks make test runs beside go test -race ./..., one after another: none needs its result,
# and together they fill the CPU its waits on servers, PostgreSQL, Node and Chromium leave idle.
# Each runs to the end even when one before it failed; their output is printed after go test's.
# The plain server binary is built once for the three go test runs (TRIAD_TEST_SERVER_BIN, which
# cmd/testrun then leaves alone), not once in each.
TEST_BESIDE := vet breaking lint-specs check-sdk fuzz-short test-replicas contract

.PHONY: vet
vet: ## go vet ./...
	$(GO) vet ./...

.PHONY: test
test: deps-postgres deps-haproxy deps-pgbouncer deps-chromium deps-prometheus deps-npm check-generated fmt-check sqlc-check ## every check: generated code, gofmt, sqlc, then go test -race (promtool over deploy/monitoring included) with, beside it, go vet, breaking changes against the released specs, spec lint, the SDK type check, the short fuzz run, the replica run, the Prism contract run
	@beside=$$(mktemp -d); \
	$(GO) build -o $$beside/triad-server ./cmd/server || exit 1; \
	export TRIAD_TEST_SERVER_BIN=$$beside/triad-server; \
	( for c in $(TEST_BESIDE); do start=$$(date +%s); \
		if $(MAKE) --no-print-directory $$c > $$beside/$$c.log 2>&1; then r=ok; else r=FAILED; echo $$c >> $$beside/failed; fi; \
		echo "$$r make $$c ($$(( $$(date +%s) - start )) s)" >> $$beside/summary; done ) & side=$$!; \
	echo "beside go test, one after another: make $(TEST_BESIDE) (output after go test's)"; \
	$(TESTRUN) -- -race -count=1 -timeout 25m -p $(TEST_PARALLEL) ./...; rc=$$?; \
	wait $$side; \
	for c in $(TEST_BESIDE); do echo; echo "=== make $$c"; cat $$beside/$$c.log; done; \
	echo; echo "=== beside go test:"; cat $$beside/summary; \
	if [ -s $$beside/failed ]; then echo "FAILED beside go test: $$(tr '\n' ' ' < $$beside/failed)"; rc=1; fi; \
	rm -rf $$beside; exit $$rc

# Go native fuzz targets (package:target); each runs FUZZTIME on top of its seed corpus, which
# `go test` alone replays as plain tests (testdata/fuzz/<target>/ plus the f.Add seeds).
FUZZ_TARGETS := impl/kit/screen:FuzzCheckJSON impl/kit/screen:FuzzCheckValues impl/surfaces/orders/money:FuzzParse \
	impl/surfaces/auth/token:FuzzParse impl/surfaces/auth/token:FuzzParseClaims impl/surfaces/auth/token:FuzzFastClaims impl/surfaces/auth/token:FuzzCookieValue \
	impl/surfaces/auth/oauth1:FuzzParseAuthorization \
	impl/credentials/password:FuzzParse
# A count, not a duration: a -fuzztime duration races Go's fuzz coordinator at its deadline and
# fails a healthy target with "context deadline exceeded" on a loaded machine (go.dev/issue/75804,
# not fixed in Go 1.26); a count has no deadline to race.
FUZZTIME ?= 20000x

.PHONY: fuzz-short
fuzz-short: ## run every Go fuzz target for FUZZTIME (20000x: that many inputs each; part of make test); a finding is written to the package's testdata/fuzz
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		out=$$($(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) ./$$pkg 2>&1) || { echo "$$out"; exit 1; }; done

.PHONY: lint
lint: deps-npm fmt-check sqlc-check lint-specs vet ## go vet, gofmt, sqlc vet and the spec linters (Spectral, Redocly): zero errors, zero warnings

.PHONY: lint-specs
lint-specs: deps-npm ## Spectral and Redocly over every bundled spec (gen/openapi/*.yaml, what is served): zero errors, zero warnings (part of make test)
	$(NPM_BIN)/spectral lint --fail-severity=warn --ruleset .spectral.yaml $(SPECS:%=gen/openapi/%.yaml)
	$(NPM_BIN)/redocly lint --config redocly.yaml $(SPECS:%=gen/openapi/%.yaml)

.PHONY: bench
bench: deps-postgres build ## Go benchmarks and a wrk load run, each beside a same-run baseline
	bash scripts/bench.sh

.PHONY: bench-curves
bench-curves: deps-postgres ## orders cost curves: page times and write throughput at 10k..10M orders and 1..256 clients
	bash scripts/bench-curves.sh

.PHONY: list-fairness
list-fairness: deps-postgres build ## list-fairness load run: 4 customers paging their own 1M-order lists by price (page 100 of 100) on 8 connections each; a bystander's page 0 median <= 20 ms (LIST_ARGS; not part of make test)
	$(GO) build -o bin/flood ./cmd/flood
	bin/flood -server bin/server -lists 4 -duration 10s $(LIST_ARGS)

.PHONY: device-fairness
device-fairness: deps-postgres ## device-cookie load run: 16 guessers at one address for 25 s per surface (prod defaults) while a real user with her device cookie signs in there every 0.5 s; >= 90% within 3 s (not part of make test)
	set -o pipefail; $(GO) test -tags devicefairness -count=1 -timeout 10m -v -run '^TestBinary_DeviceOutlastsGuessers$$' ./cmd/server/ | grep -E 'device-fairness|^(---|===|ok|FAIL|PASS)'

.PHONY: abuse-fairness
abuse-fairness: deps-postgres ## issue-44 load run (prod defaults, 20 s per phase): a new client at the owner's address under a 6-address attack (orders, brands, basic auth), 32 device logins of 8 farmed accounts, one customer's writes on 40 connections; prints the figures (not part of make test)
	set -o pipefail; $(GO) test -tags abusefairness -count=1 -timeout 15m -v -run '^TestBinary_AbuseFairness$$' ./cmd/server/ | grep -E 'abuse-fairness|^(---|===|ok|FAIL|PASS)|_test.go'

.PHONY: flood
flood: deps-postgres build ## login-flood load run: server RSS <= 256 MiB and a real user's median login <= 1 s under 120 connections for 20 s (RUNS, FLOOD_ARGS; not part of make test)
	bash scripts/flood.sh

.PHONY: clean
clean: ## remove build output (keeps DATA_DIR)
	rm -rf bin

.PHONY: test-ledger-conversion
test-ledger-conversion: deps-postgres ## the live conversion of the ledger to monthly partitions (migration 00340) over 1M ledger rows while orders are written (make test runs it over 60k); prints the time it took (not part of make test)
	TRIAD_LEDGER_CONVERSION_ROWS=$(or $(ROWS),1000000) $(GO) test -count=1 -timeout 30m -v -run '^TestLedgerConversion_WhileServing$$' ./impl/surfaces/orders/
