# guestcheck and sealprep: static Go binaries for Linux cloud images.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO      ?= go
PKG     := github.com/guestcheck/guestcheck
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# COMMIT is stamped as VERSION is, so that --version names the commit where
# the toolchain records no VCS data (GOFLAGS=-buildvcs=false, a tarball:
# make build COMMIT=...).
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -s -w -X $(PKG)/internal/shared/buildinfo.Version=$(VERSION) -X $(PKG)/internal/shared/buildinfo.Date=$(SOURCE_DATE_EPOCH) -X $(PKG)/internal/shared/buildinfo.Commit=$(COMMIT)
BUILD   := CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.7.0

.PHONY: help ldflags build run test test-kube test-short bench bench-sysprep bench-prove lint fuzz clean package vm-test vm-test-long

help: ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## /{printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

ldflags: ## print the -ldflags that build stamps (version, date, commit)
	@echo '$(LDFLAGS)'

build: ## build static bin/guestcheck and bin/sealprep
	$(BUILD) -o bin/guestcheck ./cmd/guestcheck
	$(BUILD) -o bin/sealprep ./cmd/sealprep

run: build ## build guestcheck and run it on this machine (text report)
	@./bin/guestcheck $(ARGS); rc=$$?; case $$rc in \
	  0) echo "make run: guestcheck exited 0: nothing worse than pass or skip" ;; \
	  1) echo "make run: guestcheck exited 1: at least one check failed or could not run (see above)" ;; \
	  2) echo "make run: guestcheck exited 2: warnings, no failures (see above)" ;; \
	  3) echo "make run: guestcheck exited 3: usage or configuration error, nothing was checked" ;; \
	  *) echo "make run: guestcheck exited $$rc unexpectedly" ;; \
	esac; exit $$rc

test: ## the whole suite: installs its Debian packages as root, lint, then every test with -race (fuzz seeds and saved crashers run as regressions); ends with what was skipped
	@bash scripts/test-deps.sh install
	@$(MAKE) --no-print-directory lint
	@log=$$(mktemp); GUESTCHECK_SKIP_LOG=$$log $(GO) test -race -count=1 -timeout 30m ./...; rc=$$?; \
	  GUESTCHECK_SKIP_LOG=$$log $(MAKE) --no-print-directory test-kube || rc=1; \
	  bash scripts/test-deps.sh summary $$log; rm -f $$log; exit $$rc

# test/kube is a module of its own (its Kubernetes dependencies stay out of
# go.mod). No -race: the code it drives is kube-apiserver's and the built
# guestcheck, a separate process; race instrumentation would only slow both.
test-kube: ## the KubeVirt examples and guestcheck fleet against a real API server (test/kube, loopback only)
	cd test/kube && $(GO) test -count=1 ./...

test-short: ## unit tests only
	$(GO) test -count=1 ./...

fuzz: ## explore with every fuzz target for FUZZTIME (default 10s) each; new crashers land in testdata/fuzz
	@FUZZTIME=$${FUZZTIME:-10s}; n=0; start=$$(date +%s); \
	for pkg in $$($(GO) list ./...); do \
	  list=$$($(GO) test -list '^Fuzz' $$pkg 2>&1) || { echo "$$list"; echo "fuzz: cannot list the targets of $$pkg"; exit 1; }; \
	  for t in $$(echo "$$list" | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$t"; n=$$((n+1)); \
	    out=$$($(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$$FUZZTIME $$pkg 2>&1) || { echo "$$out"; exit 1; }; \
	  done; \
	done; \
	echo "fuzz: $$n targets, $$(( $$(date +%s) - start ))s"

bench: build ## Go benchmarks, then guestcheck vs cloud-init status (hyperfine), RSS and binary sizes
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	bash scripts/bench.sh
	@if ls $${GUESTCHECK_VM_CACHE:-/var/tmp/guestcheck-vm-cache}/image-*/root.img >/dev/null 2>&1; then \
	  bash scripts/bench-sysprep.sh; \
	else echo "bench: no virt-sysprep comparison: no VM test image yet (make vm-test builds it; then make bench-sysprep)"; fi
	@if ls $${GUESTCHECK_VM_CACHE:-/var/tmp/guestcheck-vm-cache}/image-*/root.img >/dev/null 2>&1; then \
	  bash scripts/bench-prove.sh; \
	else echo "bench: no sealprep prove run: no VM test image yet (make vm-test builds it; then make bench-prove)"; fi
	bash scripts/bench-intent.sh

bench-sysprep: build ## sealprep apply --image (appliance; host kernel) vs virt-sysprep -a on one booted-once Debian 12 image: wall s, peak memory of the process tree, clones booted (root)
	bash scripts/bench-sysprep.sh

bench-prove: build ## sealprep prove: two clones of the Debian 12 test image under TCG, --reboot, then one clone and two --copy copies; per step (first boot, reboot, copy) seconds to the verdict, wall time, prove's peak RSS, phases (root)
	bash scripts/bench-prove.sh

lint: ## gofmt, go vet, staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	cd test/kube && $(GO) vet ./... && $(STATICCHECK) ./...

PKG_ARCH    ?= $(shell $(GO) env GOARCH)
PKG_VERSION ?= $(shell git describe --tags --match 'v[0-9]*' 2>/dev/null || echo 0.0.0-git.$$(git rev-parse --short HEAD))

package: ## build dist/*.deb and dist/*.rpm for PKG_ARCH (reproducible: SOURCE_DATE_EPOCH = last commit)
	GOARCH=$(PKG_ARCH) $(MAKE) --no-print-directory build VERSION=$(PKG_VERSION)
	cd tools && $(GO) build -o ../bin/nfpm github.com/goreleaser/nfpm/v2/cmd/nfpm
	@mkdir -p dist
	for p in deb rpm; do \
	  GOARCH=$(PKG_ARCH) VERSION=$(PKG_VERSION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
	    bin/nfpm package -f nfpm.yaml -p $$p -t dist/ || exit 1; \
	done

vm-test: package ## end-to-end tests in QEMU guests (root; see docs/vm-tests.md); the long scenarios are skipped
	@bash scripts/test-deps.sh vm
	GO=$(GO) bash scripts/vm-test.sh 90m

vm-test-long: package ## vm-test with the long scenarios too (TestVMIntent, TestVMNetIntent, prove/regen-keys): about 13 minutes more under TCG
	@bash scripts/test-deps.sh vm
	GO=$(GO) GUESTCHECK_VM_LONG=1 bash scripts/vm-test.sh 120m

clean: ## remove build outputs
	rm -rf bin dist
