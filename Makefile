# askd — make targets. `make test` is what CI runs (.ci/run).
GO ?= go
PKGS := ./...

.PHONY: test vet fmt build bench fuzz soak clean

## test: vet, gofmt check, then every test with the race detector
test: vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

build:
	$(GO) build -o bin/askd ./cmd/askd

## bench: the Go benchmarks whose figures are in docs/benchmarks.md
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./internal/app/... ./internal/httpapi/...

## fuzz: each fuzz target for FUZZTIME (default 10m)
FUZZTIME ?= 10m
fuzz:
	@for t in $$($(GO) test -list '^Fuzz' . | grep '^Fuzz'); do \
		echo "== $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) . || exit 1; \
	done

clean:
	rm -rf bin
