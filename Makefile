# gomonty — run untrusted Python from Go in crash-isolated monty workers.
#
#   make run     build the CLI and run an example program through a real worker
#   make test    everything CI checks (installs what it needs first)

SHELL := /bin/bash
GO ?= go
BUF := $(GO) tool -modfile=tools/go.mod buf
STATICCHECK := $(GO) tool -modfile=tools/go.mod staticcheck
MONTY_BIN ?= $(CURDIR)/.monty/bin/monty
FUZZTIME ?= 4s
export MONTY_BIN

.PHONY: all worker build run test vet cross lint unit unit-norace relay-suites conform soak-server remote fuzz-smoke bench generate-proto check-proto tidy-check api-check api-update replay

all: build

## worker: fetch the released monty worker from npm, verify its integrity, unpack it into .monty/bin
worker:
	@bash scripts/install-worker.sh

## build: build the montygo CLI into bin/
build:
	CGO_ENABLED=0 $(GO) build -o bin/montygo ./cmd/montygo

## run: the main job — run examples/hello.py through a real worker
run: worker build
	./bin/montygo run examples/hello.py

## test: vet, race tests (incl. live-worker tests), generated-code check, lint, fuzz smoke
test: worker vet cross check-proto tidy-check api-check lint unit unit-norace replay relay-suites conform fuzz-smoke

vet:
	$(GO) vet ./...

unit: worker
	$(GO) test -race -count=1 ./...

## cross: the module builds and vets, tests included, for macOS and for
## Windows; the CLI, the conformance kit and examples/pool signal process
## groups and are Unix-only by build tag, as are the test suites that drive
## real workers, so on Windows the library (for remote sessions) and its
## portable tests are what is checked
cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...

lint:
	$(STATICCHECK) ./...

## unit-norace: the measurements the race detector would distort (real heap
## growth within the decode budget, the 256 MiB hostile frame, the growth of
## rendering work at full size)
unit-norace: worker
	$(GO) test -count=1 -run 'TestRealAllocationStaysWithinTheBudget|TestParent/print_at_cap|TestRenderWorkGrowsLinearly' ./codec/codecv4/ ./internal/hostile/ ./value/

## replay: every recorded session of testdata/v2 replayed against the
## released worker and `montygo subprocess` at protocols 2, 4 and 5; on its
## own, because its four targets' processes would crowd the unit suites'
## time-bounded scenarios on 2 CPUs
replay: worker
	MONTY_REPLAY=1 $(GO) test -count=1 -run TestSubprocessReplaysVectors ./cmd/montygo/

## relay-suites: the real-worker session, pool and mount suites again, with
## `montygo subprocess` as the worker, at protocols 4, 2 and 5
relay-suites: worker
	@bash scripts/relay-suites.sh

## soak-server: 500 sessions over 3 in-process server replicas with repeated
## drains (CI runs 60 as part of unit)
soak-server: worker
	$(GO) test -count=1 -run TestSoakDrainsAcrossReplicas ./server/ -soak-sessions 500 -v

## remote: examples/remote, 3 montygo serve replicas with rolling drains
remote: build
	$(GO) run ./examples/remote -servers 3 -sessions 200 -drain-every 25
## conform: the conformance kit's worker rules against the released worker
## (protocol 2) and against the Go child, `montygo subprocess --protocol 2`,
## `--protocol 4` and `--protocol 5` relaying to it; fails when any rule other than the
## documented deviations of each fails, or when one of those passes
## (docs/CONFORMANCE.md); an empty set runs without --expect-fail, so every
## rule must pass
CONFORM_V2_DEVIATIONS := load.old-dump-version-rejected,state.resume-futures-results-checked-first
CONFORM_MONTYGO_V2_DEVIATIONS := state.resume-futures-results-checked-first
CONFORM_MONTYGO_V4_DEVIATIONS := print.stderr-segments,values.deep-input-accepted
CONFORM_MONTYGO_V5_DEVIATIONS := print.stderr-segments,values.deep-input-accepted
conform: worker build
	./bin/montygo conform worker --worker $(MONTY_BIN) --protocol 2 --expect-fail $(CONFORM_V2_DEVIATIONS)
	./bin/montygo conform worker --worker $(CURDIR)/bin/montygo --worker-args "subprocess --protocol 2 --worker $(MONTY_BIN)" --protocol 2 $(if $(CONFORM_MONTYGO_V2_DEVIATIONS),--expect-fail $(CONFORM_MONTYGO_V2_DEVIATIONS))
	./bin/montygo conform worker --worker $(CURDIR)/bin/montygo --worker-args "subprocess --protocol 4 --worker $(MONTY_BIN)" --protocol 4 $(if $(CONFORM_MONTYGO_V4_DEVIATIONS),--expect-fail $(CONFORM_MONTYGO_V4_DEVIATIONS))
	./bin/montygo conform worker --worker $(CURDIR)/bin/montygo --worker-args "subprocess --protocol 5 --worker $(MONTY_BIN)" --protocol 5 $(if $(CONFORM_MONTYGO_V5_DEVIATIONS),--expect-fail $(CONFORM_MONTYGO_V5_DEVIATIONS))

## fuzz-smoke: run every fuzz target briefly
fuzz-smoke:
	@bash scripts/fuzz-smoke.sh $(FUZZTIME)

## bench: all benchmarks with allocation figures
bench: worker
	$(GO) test -run='^$$' -bench=. -benchmem ./...

## generate-proto: regenerate internal/pb from proto/
generate-proto:
	@bash scripts/gen-proto.sh

## check-proto: fail when the checked-in generated code is stale
check-proto:
	@bash scripts/check-proto.sh

## api-check: fail when the exported API differs from api/gomonty.txt
## (regenerate after an intended change with `make api-update`)
api-check:
	$(GO) test -count=1 -run TestAPIGolden ./internal/apicheck/

## api-update: rewrite api/gomonty.txt from the current tree
api-update:
	$(GO) test -count=1 -run TestAPIGolden ./internal/apicheck/ -update

tidy-check:
	@$(GO) mod tidy -diff
