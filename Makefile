# ripple - top-level entry points. CMake does the building; this file only
# names the jobs people run. Every target installs what is missing first.
#
#   make demo    set everything up and run the main demo
#   make test    set everything up and run every test (also under ASan/UBSan and TSan)
#   make bench   run the benchmarks (library, simulation, the lab's paper-1 scenario,
#                the webhook, the guard, the dashboard, the trace server)
#   make reproduce  run the papers' scenarios on the lab and analyse them
#   make lint    clang-format, clang-tidy and cppcheck
#   make fuzz    run the fuzzers for longer (FUZZ_SECONDS each)
#   make image   the container image, built with buildah (build/image/ripple-VERSION.oci.tar)
#   make install the programs and the dashboard into $(DESTDIR)$(PREFIX) (/usr/local);
#                make uninstall removes them again
#   make builds  every build configuration (release, dev, asan, tsan, and the image's
#                hardened flags: build-hardened), warnings as errors; CI runs it

JOBS ?= $(shell nproc)
BUILD ?= build
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps build build-dev build-asan build-tsan build-hardened builds lab demo test test-dev test-asan \
        test-tsan test-lab bench reproduce lint format fuzz image docs-img clean \
        install install-files uninstall

all: build

deps:
	@scripts/setup-deps

# Optimised build used by the demo and the benchmarks.
build: deps
	@cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIPPLE_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/release -j $(JOBS)

# gcc, warnings as errors.
build-dev: deps
	@cmake -S . -B $(BUILD)/dev -DCMAKE_BUILD_TYPE=Debug -DRIPPLE_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/dev -j $(JOBS)

# clang with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer.
build-asan: deps
	@CC=clang cmake -S . -B $(BUILD)/asan -DCMAKE_BUILD_TYPE=Debug -DRIPPLE_WERROR=ON \
	    -DRIPPLE_SANITIZE=ON -DRIPPLE_FUZZ=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/asan -j $(JOBS)

# clang with ThreadSanitizer, for the code that shares state between threads.
build-tsan: deps
	@CC=clang cmake -S . -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=Debug -DRIPPLE_WERROR=ON \
	    -DRIPPLE_TSAN=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/tsan -j $(JOBS)

# Release with the container image's hardening flags (RIPPLE_HARDEN: stack
# protector, _FORTIFY_SOURCE=2, full RELRO), warnings as errors: -O3 and
# _FORTIFY_SOURCE make gcc run analyses the other builds do not.
build-hardened: deps
	@cmake -S . -B $(BUILD)/hardened -DCMAKE_BUILD_TYPE=Release -DRIPPLE_WERROR=ON \
	    -DRIPPLE_HARDEN=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/hardened -j $(JOBS)

# Every build configuration above, warnings as errors (CI compiles them all).
builds: build build-dev build-asan build-tsan build-hardened

# The test cluster's binaries, Jaeger (the OTLP backend of lab tests), Helm (the
# chart's tests), actionlint and krew (the release's tests), built once through
# the Go module proxy and cached outside the work tree (docs/lab.md).
lab: deps
	@lab/build.sh >/dev/null
	@lab/build.sh --jaeger >/dev/null
	@lab/build.sh --helm >/dev/null
	@lab/build.sh --node >/dev/null
	@lab/build.sh --actionlint >/dev/null
	@lab/build.sh --krew >/dev/null

demo: build lab
	@scripts/with-lab scripts/demo $(BUILD)/release

test-dev: build-dev
	@cd $(BUILD)/dev && ctest --output-on-failure -LE lab -j $(JOBS)

test-asan: build-asan
	@cd $(BUILD)/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -LE lab -j $(JOBS)

test-tsan: build-tsan
	@cd $(BUILD)/tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -L unit -j $(JOBS)

# Tests against a real control plane, brought up and down around them: the
# lab's own tests, then the C programs labelled "lab" (the Kubernetes client),
# built with ASan/UBSan, one at a time since some restart the API server. The
# C programs' lab has two API servers, as managed control planes do (the
# webhook's replicas are tested behind both: test_replicas_lab), and with
# kube-apiserver's own tracing (test_apiserver_trace_lab; it exports to a port
# where only that test listens, and drops its batches otherwise). The lab's
# tests include its real node (test-node: root), which runs the chart from the
# image of `make image` and kubectl ripple from the ASan build.
test-lab: lab build-asan image
	@RIPPLE_BIN=$(CURDIR)/$(BUILD)/asan/bin bash lab/tests/run-all.sh
	@RIPPLE_LAB_UP_ARGS="--apiservers 2 --apiserver-tracing" scripts/with-lab sh -c 'cd $(BUILD)/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -L lab'

test: test-dev test-asan test-tsan test-lab

# The trace server's benchmarks last: bench_ingest fails (exit 1) while ingest
# misses its target, and must not keep the others from running. Start-up is
# measured at 1M mergelogs unless RIPPLE_BENCH_FULL=1 (10M: a minute, 4.3 GB
# of disk in /tmp).
bench: build lab
	@$(BUILD)/release/bench/bench_lib
	@$(BUILD)/release/bench/sim_mergelogs
	@$(BUILD)/release/bench/bench_kube
	@scripts/with-lab lab/bench-paper1.sh
	@scripts/with-lab bench/bench-webhook.sh --build $(BUILD)/release
	@scripts/with-lab bench/bench-guard.sh --build $(BUILD)/release
	@bench/bench-dashboard.sh --build $(BUILD)/release
	@bench/bench-otlp.sh --build $(BUILD)/release
	@bench/bench-vs-jaeger.sh --build $(BUILD)/release
	@bench/bench-details.sh --build $(BUILD)/release
	@bench/bench-memory.sh --build $(BUILD)/release
	@$(BUILD)/release/bench/bench_server
	@$(BUILD)/release/bench/bench_fights
	@$(BUILD)/release/bench/bench_ingest --server $(BUILD)/release/bin/ripple-server

# The paper-2 and paper-1 scenarios on the lab with `ripple run`, analysed
# (docs/reproductions.md); about 15 minutes.
reproduce: build lab
	@scripts/with-lab scripts/reproduce $(BUILD)/release

lint: deps build-dev
	@scripts/lint $(BUILD)/dev

# The docs' pictures from their sources (docs/img/*.dot -> *.svg, Graphviz);
# commit both (tests/docs checks they agree).
docs-img: deps
	@scripts/render-docs

format: deps
	@clang-format -i $$(git ls-files '*.c' '*.h')

# Every tests/fuzz/fuzz_*.c target, each with its corpus in tests/fuzz/corpus/.
fuzz: build-asan
	@for src in tests/fuzz/fuzz_*.c; do \
	  f=$$(basename $$src .c); c=$${f#fuzz_}; mkdir -p $(BUILD)/fuzz-corpus/$$c; \
	  $(BUILD)/asan/tests/$$f -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	    $(BUILD)/fuzz-corpus/$$c tests/fuzz/corpus/$$c || exit 1; \
	done

# The container image (deploy/image/Containerfile) with buildah, as root: its
# Debian base made with debootstrap (cached), the image as an OCI archive; then
# its programs run from it as uid 65532 on a read-only root (deploy/image/check).
image: deps
	@scripts/build-image
	@deploy/image/check

# The programs (ripple, ripple-*, kubectl-ripple) into $(DESTDIR)$(PREFIX)/bin and the
# dashboard into share/ripple/web, where ripple-server finds it (beside its bin/), from
# the optimised build above (its install() rules), stripped. install-files does the
# copying alone, from a build already made (tests/release/test_install.sh runs it).
install: build
	@$(MAKE) --no-print-directory install-files

install-files:
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD)/release --prefix "$(PREFIX)" --strip

# Removes what the last `make install` from this tree installed, by the list CMake
# kept of it ($(BUILD)/release/install_manifest.txt, without DESTDIR: give the same
# DESTDIR), then the directories under share/ripple left empty.
uninstall:
	@manifest=$(BUILD)/release/install_manifest.txt dest="$(DESTDIR)"; \
	test -f "$$manifest" || { echo "uninstall: no $$manifest: nothing was installed from $(BUILD)/release" >&2; exit 1; }; \
	while IFS= read -r f || [ -n "$$f" ]; do rm -fv -- "$$dest$$f"; done <"$$manifest"; \
	sed -n 's|^\(.*/share/ripple\)/.*|\1|p' "$$manifest" | sort -u | while IFS= read -r d; do \
	  [ ! -d "$$dest$$d" ] || find "$$dest$$d" -depth -type d -empty -delete; done; \
	rm -f "$$manifest"

clean:
	rm -rf $(BUILD)
