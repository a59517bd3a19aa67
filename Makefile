# husk: build, test, benchmark, demo. Run as root on Debian 12.
#
#   make demo    build husk and run a container from a busybox bundle
#   make test    unit tests, the bats integration suites, the security
#                suite, the fuzz targets (bounded), then the client suites
#                (containerd/ctr, the CRI, podman driving husk; kubelet
#                and critest on containerd 1.6 and 2.x: docs/clients.md)
#                and the VM lane (make vm-test)
#   make vm-test the VM lane: husk's suites in QEMU guests with pure cgroup v2,
#                (a) systemd as PID 1 and (b) no systemd; see tests/vm/README.md
#                  make vm-test VM_HUSK=/abs/husk VM_SUITES="/abs/a.bats /abs/b.bats" VM_SETUPS="a b"
#   make vm-bench  run/exec of husk, runc and crun inside the guests, as ratios

SHELL := /bin/bash

GO      ?= go
BATS    ?= bats
VERSION := $(shell cat $(CURDIR)/VERSION)
COMMIT  ?= $(shell git rev-parse --verify --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# husk is linked statically against musl (HUSK_LIBC=glibc: against glibc,
# also static): every husk process, `husk init` and each exec included,
# then starts without the dynamic loader, and without glibc's start-up,
# which on a VM spends about 0.5 ms of CPU in trapped cpuid instructions
# sizing caches (docs/building.md, "How husk is built"). build/musl.sh
# builds Debian's libseccomp with musl-gcc once (cached in
# $(HUSK_BUILD_CACHE), keyed by its recipe) and runs go build with
# CC=musl-gcc. cgo stays on (nsenter, libseccomp). netgo and osusergo keep
# the C library's NSS (getaddrinfo, getpwuid_r) out of the binary: user
# names come from /etc/passwd, as runc reads them.
# --wrap=main starts every husk process's Go runtime on one P (package
# onep). It also fails the trivial link go uses to probe which linker flags
# work, so the flags go would add after that probe are given here: -no-pie
# and compressed debug sections (without them husk grows from 12.9 to
# 17.8 MB). A plain `go build .` still builds a working husk, linked
# dynamically against glibc, on the runtime's default Ps.
HUSK_LIBC   ?= musl
HUSK_TAGS   := netgo,osusergo
HUSK_EXTLD  := -static -Wl,--wrap=main -Wl,--compress-debug-sections=zlib
HUSK_LDFLAGS := $(LDFLAGS) -linkmode external -extldflags '$(HUSK_EXTLD)'
HUSK_BUILD_CACHE ?= /var/cache/husk-build
export HUSK_BUILD_CACHE

# Debian packages building husk needs (cgo and libseccomp; musl-tools,
# gperf, curl, patch and xz-utils for build/musl.sh; glibc's for `go test` and a plain
# `go build`); every target that compiles installs the missing ones, so
# `make demo` and `make test` work on a Debian with only Go installed.
BUILD_DEPS := gcc libc6-dev pkg-config libseccomp-dev musl-tools gperf curl patch xz-utils make git ca-certificates

# The demo's bundle: a static busybox and jq to set the demo's args.
DEMO_DEPS  := busybox-static jq

# Debian packages the integration suites need; `make test` installs the
# missing ones (a no-op in CI, where .ci/run has installed them). runc and
# crun are there to compare husk's behaviour with. criu for the checkpoint
# tests; the other tools the suites run: python3 (security), readelf
# (binutils), socat (a stand-in for systemd's notify socket), keyctl
# (keyutils), capsh (libcap2-bin), nft (nftables).
TEST_DEPS  := bats busybox-static jq iproute2 procps util-linux containernetworking-plugins uidmap passwd runc crun strace \
	criu python3 binutils socat keyutils libcap2-bin nftables

# The client suites (tests/clients) also need these; `make clients`
# installs the missing ones. HUSK_CLIENT_RUNTIME switches the runtime the
# clients drive, e.g. HUSK_CLIENT_RUNTIME=/usr/sbin/runc make clients.
# docker.bats runs Debian's docker.io on a private dockerd, with the
# runtime as `husk` beside Docker's runc (DOCKER_RUNTIMES; docs/testing.md).
CLIENT_DEPS := containerd podman containernetworking-plugins busybox-static bats jq iproute2 bsdutils
DOCKER_DEPS := docker.io iptables util-linux
HUSK_CLIENT_RUNTIME ?= $(CURDIR)/husk

BENCH_N    ?= 30
BENCH_ARGS ?=
DEMO_DIR   ?= /tmp/husk-demo
BINDIR     ?= /usr/local/bin

# The VM lane (tests/vm/README.md). VM_SUITES defaults to the lane's own
# suites plus the host suites chosen to run in the guests too (kubelet.bats
# in a: kubelet's systemd driver on containerd 2.x); every path is
# absolute (suites of another worktree run from a copy of their tests/ tree),
# and PATH:a (or :b, :ab, ...) runs a file in those setups only; the LSM
# guests c (AppArmor) and d (SELinux) run only their lsm-*.bats, the
# clients' among them, kubelet too (c 11 min with boot at load 9-12, d 8 min at load 2-5). TCG makes each test seconds long: the host suites
# are split between the setups.
# The SELinux tools the image recipe runs (checkmodule from checkpolicy;
# semodule_package, semodule and setfiles from policycoreutils) run in the
# guest root's chroot, from the packages debootstrap put there
# (tests/vm/build-image.sh): the host needs none of them.
VM_DEPS    := qemu-system-x86 qemu-utils debootstrap lz4 e2fsprogs cpio busybox-static
VM_CACHE   ?= /var/cache/husk-vm
VM_HUSK    ?= $(CURDIR)/husk
VM_HOST_SUITES ?= exec:b lifecycle:a cgroups:b
VM_SUITES  ?= $(CURDIR)/tests/vm/suites/lane.bats:ab \
	$(addsuffix :ab,$(filter-out %/lane.bats %/clients-cri.bats %/clients-podman.bats $(wildcard $(CURDIR)/tests/vm/suites/lsm-*.bats),$(sort $(wildcard $(CURDIR)/tests/vm/suites/*.bats)))) \
	$(CURDIR)/tests/vm/suites/clients-cri.bats:a $(CURDIR)/tests/vm/suites/clients-podman.bats:a \
	$(CURDIR)/tests/clients/kubelet.bats:a \
	$(CURDIR)/tests/vm/suites/lsm-apparmor.bats:c $(CURDIR)/tests/vm/suites/lsm-selinux.bats:d \
	$(CURDIR)/tests/vm/suites/lsm-podman.bats:cd $(CURDIR)/tests/vm/suites/lsm-docker.bats:c \
	$(CURDIR)/tests/vm/suites/lsm-kubelet.bats:cd \
	$(foreach s,$(VM_HOST_SUITES),$(CURDIR)/tests/integration/$(firstword $(subst :, ,$(s))).bats:$(if $(findstring :,$(s)),$(lastword $(subst :, ,$(s))),ab))
VM_SETUPS  ?= a b c d
VM_BENCH_N ?= 20

.PHONY: all husk install test unit integration security fuzz clients build-deps demo-deps test-deps client-deps bench demo clean
.PHONY: vm-test vm-bench vm-image vm-deps vm-prebuild

all: husk

# Always handed to go build: its cache decides what is stale. husk-cni,
# the CNI helper, is built and installed beside husk, where husk finds it;
# it is pure Go, so built without cgo it is static too.
husk: build-deps
	$(if $(filter musl,$(HUSK_LIBC)),build/musl.sh,CGO_ENABLED=1) $(GO) build -tags $(HUSK_TAGS) -ldflags "$(HUSK_LDFLAGS)" -o husk .
	CGO_ENABLED=0 $(GO) build -o husk-cni ./cmd/husk-cni

# make release: husk and husk-cni for linux/amd64 (make husk's musl build)
# and linux/arm64 (glibc, Debian's cross gcc), static and reproducible, into
# dist/: a tarball and an SPDX SBOM per architecture, SHA256SUMS
# (build/release.sh; docs/building.md, "Releases"). make deb: a .deb of the
# amd64 build (build/deb.sh). Both from a committed tree.
RELEASE_DEPS := gcc-aarch64-linux-gnu libc6-dev-arm64-cross linux-libc-dev-arm64-cross jq dpkg-dev
DIST ?= $(CURDIR)/dist
.PHONY: release release-deps release-test deb
RELEASE_ENV = VERSION="$(VERSION)" COMMIT="$(COMMIT)" HUSK_TAGS="$(HUSK_TAGS)" HUSK_LDFLAGS="$(HUSK_LDFLAGS)" GO="$(GO)"
release: build-deps release-deps
	$(RELEASE_ENV) DIST="$(DIST)" build/release.sh

release-deps:
	@$(call apt_install,$(RELEASE_DEPS))

# make vm-arm64: the arm64 release build (build/release.sh for arm64 alone,
# of the tree as it is) on a smoke set in an arm64 Debian 12 guest under
# qemu-system-aarch64, TCG, systemd as its PID 1 (tests/vm/arm64/run.sh; its
# root: debootstrap --foreign and mkfs.ext4 -d; docs/testing.md, "arm64").
# ./husk writes the bundles' configs (husk spec) on this side.
VM_ARM64_DEPS := qemu-system-arm debootstrap e2fsprogs cpio jq binutils
VM_ARM64_DIST ?= $(CURDIR)/dist-arm64
.PHONY: vm-arm64 vm-arm64-deps
vm-arm64: husk release-deps vm-arm64-deps
	RELEASE_ARCHES=arm64 HUSK_RELEASE_DIRTY=1 $(RELEASE_ENV) DIST="$(VM_ARM64_DIST)" build/release.sh
	tar -xzf "$(VM_ARM64_DIST)/husk-$(VERSION)-linux-arm64.tar.gz" -C "$(VM_ARM64_DIST)"
	VM_ARM64_HUSK="$(VM_ARM64_DIST)/husk-$(VERSION)-linux-arm64/husk" VM_SPEC_HUSK="$(CURDIR)/husk" tests/vm/arm64/run.sh

vm-arm64-deps:
	@$(call apt_install,$(VM_ARM64_DEPS))

deb: husk release-deps
	VERSION="$(VERSION)" build/deb.sh $(CURDIR)/husk $(CURDIR)/husk-cni $(DIST)

# Two `make release` of HEAD in two fresh clones, compared byte for byte,
# and the .deb installed, used and removed (tests/release).
release-test: build-deps release-deps test-deps
	set -o pipefail; \
	$(BATS) --tap --timing --print-output-on-failure tests/release | awk -f tests/integration/summary.awk

install: husk
	install -D -m 0755 husk $(DESTDIR)$(BINDIR)/husk
	install -D -m 0755 husk-cni $(DESTDIR)$(BINDIR)/husk-cni

# make test: the guest lanes (vm-test, vm-arm64: QEMU guests, most of the
# time) run in the background beside the host suites, which wait on
# processes and daemons more than they compute; their TAP is printed after
# the host suites' (VM_LOG). Every install first, then husk; the host suites
# go on past a failing one (-k); make test fails if any suite failed.
VM_LOG ?= $(CURDIR)/vm-test.log
HOST_SUITES ?= unit integration security fuzz release-test clients clients-kube
test: clients-prebuild vm-prebuild build-deps test-deps release-deps client-deps kube-deps vm-deps vm-arm64-deps husk
	@rc=0; \
	{ $(MAKE) --no-print-directory -k vm-test vm-arm64 </dev/null >"$(VM_LOG)" 2>&1; echo $$? >"$(VM_LOG).rc"; } & vm=$$!; \
	$(MAKE) --no-print-directory -k $(HOST_SUITES) || rc=1; \
	echo "== the host suites are done; waiting for the guest lanes (log: $(VM_LOG))"; \
	wait $$vm; cat "$(VM_LOG)"; \
	[ "$$(cat "$(VM_LOG).rc" 2>/dev/null)" = 0 ] || { echo "== the guest lanes failed"; rc=1; }; \
	[ $$rc = 0 ] || echo "== make test: FAILED"; exit $$rc


unit: build-deps test-deps
	$(GO) test ./...

# TAP for readable CI logs, ended by bats' summary line (tests/integration/summary.awk).
integration: husk test-deps
	set -o pipefail; \
	HUSK_BIN=$(CURDIR)/husk $(BATS) --tap --timing --print-output-on-failure -r tests/integration \
		| awk -f tests/integration/summary.awk

# tests/security: real attacks from inside containers (runc's CVE history,
# fds and ptrace of a waiting init, devices, masks) and kill -9 at random
# points of every command. Each test checks the host afterwards.
security: husk test-deps
	set -o pipefail; \
	HUSK_BIN=$(CURDIR)/husk $(BATS) --tap --timing --print-output-on-failure tests/security \
		| awk -f tests/integration/summary.awk

# Each fuzz target for its number of runs (invariants: no panic, no hang,
# errors that name a field), about 20 s each on a 2-core machine; seeds
# live in each package's testdata/fuzz/. A count, not a duration: Go 1.26's
# fuzz coordinator can fail a target whose -fuzztime runs out while a
# worker is busy ("context deadline exceeded", no crasher: go.dev/issue/75804,
# fixed in Go 1.27). FUZZTIME=1m (or 1000x) overrides every target's budget.
FUZZTIME    ?=
FUZZ_TARGETS := ./specconv:FuzzConfig:600000x ./specconv:FuzzProcess:250000x \
	./specconv:FuzzDecodeLayered:600000x ./libcontainer:FuzzLoadState:40000x \
	./nsenter:FuzzParseBootstrap:700000x ./nsenter:FuzzParseExecPlan:1000000x \
	./nsenter/internal/stepfake:FuzzParseMounts:300000x ./nsenter/internal/hookrun:FuzzParseHooks:300000x \
	./libcontainer/criu:FuzzUnmarshalResp:400000x
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget="$(FUZZTIME)"; \
		[ -n "$$budget" ] || budget=$${rest#*:}; \
		echo "fuzz $$name ($$pkg) for $$budget"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name$$" -fuzztime $$budget; \
	done

# containerd via ctr, the CRI (criclient, a k8s.io/cri-api client, its own
# Go module) and podman, each with private daemons, driving HUSK_CLIENT_RUNTIME.
clients: husk client-deps kube-deps clients-build
	set -o pipefail; \
	HUSK_CLIENT_RUNTIME=$(HUSK_CLIENT_RUNTIME) $(BATS) --tap --timing --print-output-on-failure tests/clients \
		| awk -f tests/integration/summary.awk

# The Kubernetes clients (docs/clients.md): kubelet, containerd 2.x and
# critest, built from the Go module proxy by tests/clients/build.sh in
# test-only modules under tests/clients and cached in CLIENTS_CACHE (keyed by
# a hash of each recipe; module and build caches beside them). `make clients`
# runs husk on Debian's containerd 1.6 (kubelet.bats and critest.bats among
# its files); clients-kube runs the reference runtime (KUBE_REFERENCE) and
# husk on containerd 2.x: ctr, the CRI, kubelet and critest. kubelet-api.bats
# runs kubelet with an API server (Debian's etcd, kube-apiserver of the same
# build; openssl makes its service-account key) and compares husk's
# hostUsers: false pods with a recent runc's (build.sh runc: Debian's has no
# idmapped mounts).
CLIENTS_CACHE  ?= /var/cache/husk-clients
KUBE_REFERENCE ?= /usr/sbin/runc
KUBE_DEPS      := curl iptables etcd-server openssl
KUBE_SUITES    ?= containerd cri kubelet kubelet-api critest
.PHONY: clients-kube clients-build clients-prebuild kube-deps
export HUSK_CLIENTS_CACHE := $(CLIENTS_CACHE)

clients-kube: husk client-deps kube-deps clients-build
	@set -o pipefail; rc=0; d2=$$(tests/clients/build.sh containerd2) || exit 1; \
	for rt in $(KUBE_REFERENCE) $(HUSK_CLIENT_RUNTIME); do \
		echo "== containerd 2.x, $$rt"; \
		HUSK_CONTAINERD_DIR=$$d2 HUSK_CLIENT_RUNTIME=$$rt $(BATS) --tap --timing --print-output-on-failure \
			$(foreach s,$(KUBE_SUITES),tests/clients/$(s).bats) | awk -f tests/integration/summary.awk || rc=1; \
	done; exit $$rc

# Builds (or finds in CLIENTS_CACHE) kubelet, containerd 2.x and critest;
# waits for a build clients-prebuild started (build.sh's lock per client).
clients-build: build-deps
	GO="$(GO)" tests/clients/build.sh >/dev/null

# make test starts the client builds in the background first (minutes when
# cold) while unit, integration, security and fuzz run; its log is
# CLIENTS_CACHE/prebuild.log.
clients-prebuild: build-deps
	@mkdir -p $(CLIENTS_CACHE) && (GO="$(GO)" setsid tests/clients/build.sh </dev/null >$(CLIENTS_CACHE)/prebuild.log 2>&1 &)

kube-deps:
	@$(call apt_install,$(KUBE_DEPS))

build-deps:
	@$(call apt_install,$(BUILD_DEPS))

demo-deps:
	@$(call apt_install,$(DEMO_DEPS))

# The VM lane: a guest image built once into VM_CACHE (rebuilt when its
# recipe changes), then one QEMU guest per setup; TAP printed here.
vm-test: husk vm-deps
	set -o pipefail; \
	VM_HUSK="$(VM_HUSK)" VM_SUITES="$(VM_SUITES)" VM_SETUPS="$(VM_SETUPS)" VM_CACHE="$(VM_CACHE)" \
		GO="$(GO)" tests/vm/run.sh

# Not part of make test: the benchmark (./bench, built for the guest) of
# husk, runc and crun in each guest setup of VM_SETUPS.
vm-bench: husk vm-deps
	VM_MODE=bench VM_HUSK="$(VM_HUSK)" VM_SETUPS="$(VM_SETUPS)" VM_CACHE="$(VM_CACHE)" \
		VM_BENCH_ARGS="-n $(VM_BENCH_N)" GO="$(GO)" tests/vm/run.sh

vm-image: vm-deps
	tests/vm/build-image.sh $(VM_CACHE)

# make test builds the guest image in the background first (a debootstrap,
# minutes when cold) while the host suites run; vm-test waits for it (the
# image's lock). Its log is VM_CACHE/prebuild.log. VM_PREBUILD= turns it off.
VM_PREBUILD ?= 1
vm-prebuild: vm-deps
	@[ -z "$(VM_PREBUILD)" ] || { mkdir -p $(VM_CACHE) && \
		(setsid tests/vm/build-image.sh $(VM_CACHE) </dev/null >$(VM_CACHE)/prebuild.log 2>&1 &) }

vm-deps:
	@$(call apt_install,$(VM_DEPS))

test-deps:
	@$(call apt_install,$(TEST_DEPS))

client-deps:
	@$(call apt_install,$(CLIENT_DEPS) $(DOCKER_DEPS))

# apt_install PACKAGES: apt-get install the ones dpkg does not know. No
# service starts on install (a policy-rc.d that says no, unless the host has
# its own): docker.io's init script would start the system's dockerd, with
# its bridge and iptables rules on the host; the suites run private daemons.
# apt waits up to 10 minutes for the dpkg lock (a fresh cloud VM's
# unattended-upgrades holds it in its first minutes) rather than failing.
APT_GET := apt-get -o DPkg::Lock::Timeout=600
APT_POLICY_RC ?= /usr/sbin/policy-rc.d
define apt_install
missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
if [ -n "$$missing" ]; then \
	echo "installing" $$missing; \
	policy=$(APT_POLICY_RC); [ -e $$policy ] && policy= || printf '#!/bin/sh\nexit 101\n' >$$policy; \
	[ -z "$$policy" ] || chmod +x $$policy; \
	$(APT_GET) update -q && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -q --no-install-recommends $$missing; \
	rc=$$?; [ -z "$$policy" ] || rm -f $$policy; exit $$rc; \
fi
endef

bench: husk
	$(GO) run ./bench -husk $(CURDIR)/husk -n $(BENCH_N) $(BENCH_ARGS)

# A busybox bundle from Debian's busybox-static, the default config from
# `husk spec` (a terminal, as runc's) with a script as its args. The
# container's stdin is /dev/null: the demo reads nothing, so it finishes the
# same in a terminal, in a script and with stdin closed (CI).
DEMO_SCRIPT := echo "hello from a husk container"; \
	echo "hostname: $$(hostname)   pid: $$$$   user: $$(id)"; \
	echo "terminal: $$(tty)"; \
	echo "processes it can see: $$(ls -d /proc/[0-9]* | wc -l)"; \
	uname -sr

demo: husk demo-deps
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)/bundle/rootfs/bin $(DEMO_DIR)/bundle/rootfs/etc
	@cp /bin/busybox $(DEMO_DIR)/bundle/rootfs/bin/busybox
	@for applet in $$($(DEMO_DIR)/bundle/rootfs/bin/busybox --list); do \
		[ -e $(DEMO_DIR)/bundle/rootfs/bin/$$applet ] || ln -s busybox $(DEMO_DIR)/bundle/rootfs/bin/$$applet; \
	done
	@echo 'root:x:0:0:root:/root:/bin/sh' > $(DEMO_DIR)/bundle/rootfs/etc/passwd
	@echo 'root:x:0:' > $(DEMO_DIR)/bundle/rootfs/etc/group
	./husk spec --bundle $(DEMO_DIR)/bundle
	@jq --arg s '$(DEMO_SCRIPT)' '.process.args = ["sh", "-c", $$s]' \
		$(DEMO_DIR)/bundle/config.json > $(DEMO_DIR)/bundle/config.json.new
	@mv $(DEMO_DIR)/bundle/config.json.new $(DEMO_DIR)/bundle/config.json
	./husk --root $(DEMO_DIR)/state run --bundle $(DEMO_DIR)/bundle husk-demo-$$$$ </dev/null
	@echo "demo bundle left in $(DEMO_DIR)/bundle"

clean:
	rm -f husk husk-cni
	rm -rf $(DEMO_DIR)
