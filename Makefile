# askd — make targets. `make test` is what CI runs (.ci/run).
GO ?= go
PKGS := ./...

.PHONY: test test-loaded vet fmt build install bench fuzz soak clean

## test: vet, gofmt check, then every test with the race detector
test: lint vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

## lint (test runs it first): go.mod and go.sum as go mod tidy leaves them,
## and staticcheck clean. go run fetches staticcheck at this pinned version (a
## release that builds with go.mod's Go) and caches its build: nothing to install.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
.PHONY: lint
lint:
	$(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) $(PKGS)

## test-loaded: `make test` LOAD_RUNS times in a row (default 3) with the
## machine kept busy by LOAD_WORKERS CPU hogs (default 4: stress-ng --cpu if
## installed, else `yes` loops, stopped at the end), reporting each run's
## result and time (scripts/test-loaded.sh). For developers: every test
## must hold on a busy machine. Not run by `make test` or CI (15–30 min).
LOAD_RUNS ?= 3
LOAD_WORKERS ?= 4
test-loaded:
	LOAD_RUNS=$(LOAD_RUNS) LOAD_WORKERS=$(LOAD_WORKERS) MAKE="$(MAKE)" ./scripts/test-loaded.sh

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

build:
	$(GO) build -o bin/askd ./cmd/askd

## install: go install ./cmd/askd into GOBIN (default: GOPATH/bin), and say
## the line to add when that directory is not on PATH
install:
	$(GO) install ./cmd/askd
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH)/bin; \
	case ":$$PATH:" in *":$$dir:"*) echo "askd installed: $$dir/askd";; \
	*) echo "askd installed in $$dir, which is not on PATH; add it:"; echo "  export PATH=\"$$dir:\$$PATH\"";; esac

## bench: the Go benchmarks whose figures are in docs/benchmarks.md
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./internal/app/... ./internal/httpapi/...

## bench-scale: the scale figures of docs/benchmarks.md (SPEC §8's rows on a
## team's history: 1,000,000 settled asks, 100,000 pending, a --retain purge,
## audit verify, SSE fan-out under load) on SQLite and PostgreSQL, by
## scripts/scale-sitting.sh (its header lists the knobs). The seeded databases
## are kept in bin/scale between sittings. Hours, so never in make test or CI.
.PHONY: bench-scale
bench-scale:
	./scripts/scale-sitting.sh

## fuzz: each fuzz target of every package that has some, for FUZZTIME
## (default 10m) each; `make test` runs their seed corpora
FUZZTIME ?= 10m
FUZZPKGS ?= $$(grep -l '^func Fuzz' $$(git ls-files '*_test.go') | xargs -n1 dirname | sort -u)
fuzz:
	@for p in $(FUZZPKGS); do \
		for t in $$($(GO) test -list '^Fuzz' ./$$p | grep '^Fuzz'); do \
			echo "== ./$$p $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./$$p || exit 1; \
		done; \
	done

clean:
	rm -rf bin

## soak: the long kill -9 soak (docs/soak.md): SOAK_CYCLES_SQLITE and
## SOAK_CYCLES_PG kill cycles; `make test` runs 5 and 2
SOAK_CYCLES_SQLITE ?= 100
SOAK_CYCLES_PG ?= 20
soak:
	ASKD_SOAK_CYCLES_SQLITE=$(SOAK_CYCLES_SQLITE) ASKD_SOAK_CYCLES_PG=$(SOAK_CYCLES_PG) \
		$(GO) test -race -count=1 -timeout 60m -v -run '^TestSoak' ./internal/soak/

## image: the container image (Containerfile), tagged $(IMAGE):VERSION and
## $(IMAGE):latest: askd built here, static (CGO_ENABLED=0; -trimpath, as the
## release builds it), on an empty base with the CA certificates of this
## machine ($(CA_CERTS)) and a non-root user. ENGINE is podman when installed
## (with --format docker, which keeps the HEALTHCHECK, and no intermediate
## images left behind), else docker. No registry image is pulled.
## IMAGE_CONTEXT is the build context it fills.
ENGINE ?= $(shell command -v podman >/dev/null 2>&1 && echo podman || echo docker)
IMAGE ?= localhost/askd
IMAGE_CONTEXT ?= bin/image
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
.PHONY: image
image:
	rm -rf $(IMAGE_CONTEXT)
	mkdir -p $(IMAGE_CONTEXT)/data $(IMAGE_CONTEXT)/tmp
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags='-s -w' -o $(IMAGE_CONTEXT)/askd ./cmd/askd
	cp $(CA_CERTS) $(IMAGE_CONTEXT)/ca-certificates.crt
	cp contrib/image/passwd contrib/image/group $(IMAGE_CONTEXT)/
	@# An image tag may not hold the + of a version built from a changed tree.
	v=$$($(IMAGE_CONTEXT)/askd version | awk 'NR==1 {print $$2}'); \
	rev=$$($(IMAGE_CONTEXT)/askd version --json | sed -n 's/.*"revision":"\([0-9a-f]*\)".*/\1/p'); \
	$(ENGINE) build $(if $(filter podman,$(notdir $(ENGINE))),--format docker --layers=false) \
		--build-arg VERSION=$$v --build-arg REVISION=$$rev \
		-t $(IMAGE):$$(echo $$v | tr + -) -t $(IMAGE):latest -f Containerfile $(IMAGE_CONTEXT)

## release-check: the release configuration (.goreleaser.yaml) checked, and
## all six archives (Linux, macOS, Windows; amd64, arm64) built as a snapshot
## into dist/ with their checksums: minutes, so not in CI, which checks it and
## builds one (internal/deploy). go run fetches the pinned GoReleaser (a release
## that builds with go.mod's Go); nothing to install.
GORELEASER ?= github.com/goreleaser/goreleaser/v2@v2.17.0
.PHONY: release-check
release-check:
	$(GO) run $(GORELEASER) check
	$(GO) run $(GORELEASER) release --snapshot --clean
