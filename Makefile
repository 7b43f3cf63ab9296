# DockTrack: the two commands of the README, and the pieces they are made of.
#   make demo   track the people in the bundled clip, pipe the dock commands into docksim, close the loop; write out/
#   make test   build and run every test on the bundled samples
# Both install the Debian packages they need first when they are missing.

SWIFT      ?= swift
APT_PACKAGES = libopencv-dev libv4l-dev opencv-data pkg-config \
  libavformat-dev libavcodec-dev libswresample-dev libswscale-dev libavutil-dev libasound2-dev
# The tests also run docktrack on an emulated camera (tools/emulated-camera.sh: PipeWire's V4L2
# emulation publishing a sample clip as /dev/video0).
CAMERA_PACKAGES = pipewire pipewire-v4l2 wireplumber gstreamer1.0-pipewire gstreamer1.0-tools \
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-libav dbus
# ... and drive the control page in a real browser (headless, over the DevTools protocol).
BROWSER_PACKAGES = chromium fonts-dejavu-core
# ... and run the batch recipe as a Slurm job array on a one-node cluster (tools/slurm-local.sh).
SLURM_PACKAGES = slurm-wlm munge
OUT        ?= out
BIN        = .build/release/docktrack
DOCKSIM    = .build/release/docksim

.PHONY: deps build release demo test sanitize fuzz bench soak metrics install clean clean-modules

# Installs missing Debian packages (root, or sudo when available). apt-get update runs first,
# since a fresh machine has no package lists. Then the inference engine, OpenVINO's C API from
# its PyPI wheel, into .openvino/ (tools/install-openvino.sh; nothing when it is there).
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@tools/install-openvino.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

demo: release
	@mkdir -p $(OUT)
	$(BIN) track samples/vtest.avi --end 300 --states $(OUT)/vtest-states.jsonl --annotate $(OUT)/vtest-tracked.mp4 --summary \
	  | $(DOCKSIM) --trace $(OUT)/dock-trace.tsv > $(OUT)/dock-replies.jsonl
	$(BIN) simulate samples/vtest.avi --end 300 --annotate $(OUT)/vtest-simulated-view.mp4 --trace $(OUT)/simulate-trace.tsv > $(OUT)/simulate-metrics.json
	$(BIN) plot $(OUT)/simulate-trace.tsv -o $(OUT)/simulate-plot.png
	$(BIN) plot $(OUT)/dock-trace.tsv -o $(OUT)/dock-plot.png
	@echo "subject states:        $(OUT)/vtest-states.jsonl (one JSON line per frame)"
	@echo "annotated video:       $(OUT)/vtest-tracked.mp4"
	@echo "dock simulator:        $(OUT)/dock-replies.jsonl (final pose and battery), $(OUT)/dock-trace.tsv, plot $(OUT)/dock-plot.png"
	@echo "closed loop:           $(OUT)/vtest-simulated-view.mp4 (the virtual camera's view), plot $(OUT)/simulate-plot.png"
	@echo "closed-loop metrics:   $$(cat $(OUT)/simulate-metrics.json)"

test: APT_PACKAGES += $(CAMERA_PACKAGES) $(BROWSER_PACKAGES) $(SLURM_PACKAGES)
# The tests' failures are printed again at the end, where a log's tail shows them: the tests
# that failed, then what each recorded (the expectation and its values), last.
test: deps
	$(SWIFT) build --build-tests
	@mkdir -p .build; started=$$(date +%s); \
	{ DOCKTRACK_ENGINE_CACHE="$${DOCKTRACK_ENGINE_CACHE-$(CURDIR)/.build/engine-cache}" $(SWIFT) test --skip-build 2>&1; echo $$? > .build/test.status; } | tee .build/test.log; status=$$(cat .build/test.status); \
	echo "== the test run took $$(( $$(date +%s) - started )) s of wall time ($$(nproc) cores)"; \
	if [ $$status -ne 0 ]; then echo "== what failed (from .build/test.log):"; \
	  grep -E '✘.*failed after|error:' .build/test.log | tail -20; \
	  grep -E -A3 'recorded an issue' .build/test.log | grep -E 'recorded an issue|^↳' | cut -c1-600 | tail -12; fi; \
	exit $$status

# The test suite under AddressSanitizer, then ThreadSanitizer (the tools the tests run are built
# with the same sanitizer). Separate build folders; about 3 and 5 times as long as `make test`.
# SANITIZERS=address or SANITIZERS=thread runs one; TESTS=REGEX narrows the tests.
SANITIZERS ?= address thread
TESTS ?= .
sanitize: APT_PACKAGES += $(CAMERA_PACKAGES)
sanitize: deps
	@set -e; for s in $(SANITIZERS); do \
	  echo "== $$s sanitizer"; \
	  $(SWIFT) build --build-tests --scratch-path .build-$$s -Xswiftc -sanitize=$$s; \
	  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	    $(SWIFT) test --skip-build --scratch-path .build-$$s --filter '$(TESTS)'; \
	done

# libFuzzer on the dock protocol and on custom-tracking observations (tools/fuzz.sh), FUZZ_SECONDS
# each (default 60); seeds in Fuzz/corpus. A finding fails the run and is kept in .build-fuzz/.
FUZZ_SECONDS ?= 60
fuzz: deps
	tools/fuzz.sh $(FUZZ_SECONDS)

# Speed against the OpenCV-Python loop a user would write instead (python3-opencv from Debian),
# on the bundled clip, on it re-encoded at 1280x720, and on a one-face clip at 1280x720; then
# resident memory over 10 minutes of 30 fps 720p frames (`make soak`, about 5 minutes).
# The stronger bar: MediaPipe's BlazeFace short-range in a Python loop (PyPI mediapipe 0.10.21,
# whose wheel ships the model), in a venv of its own; and the same-job peer, YOLOX-nano on ONNX
# Runtime with supervision's ByteTrack on every frame, in the same venv.
BENCH_VENV = .venv-bench
$(BENCH_VENV)/bin/python:
	python3 -m venv $(BENCH_VENV) && $(BENCH_VENV)/bin/pip install -q mediapipe==0.10.21 onnxruntime==1.32.0 supervision==0.26.1

bench: release $(BENCH_VENV)/bin/python
	@dpkg -s python3-opencv >/dev/null 2>&1 || { SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends python3-opencv; }
	$(BIN) bench samples/vtest.avi --frames 300 --repeat 3 --detect-every 4 --detect-every 8 --mediapipe $(BENCH_VENV)/bin/python  # track's default detector; its default schedule is every 4
	$(BIN) bench samples/vtest.avi --resize 1280x720 --repeat 3 --mediapipe $(BENCH_VENV)/bin/python
	taskset -c 0 $(BIN) bench samples/vtest.avi --resize 1280x720 --repeat 3 --mediapipe $(BENCH_VENV)/bin/python \
	  --yolox-bytetrack $(BENCH_VENV)/bin/python   # one core
	$(BIN) bench samples/vtest.avi --frames 300 --pipeline-detector fast --detect-every 5 --detect-every 8 --serial --repeat 3 \
	  --recall samples --live 30 -d fast -d dnn-face -d hog-body-fast
	$(BIN) bench samples/vtest.avi --frames 300 --resize 1280x720 --pipeline-detector fast --detect-every 5 --detect-every 8 --repeat 3 --live 30
	tools/virtual-camera-latency.sh $(BIN)   # the virtual camera at 1280x720 with a reader on it: capture-to-output p50, p99
	tools/page-cost.sh $(BIN) 20 2   # track with and without a control page open in chromium: live p50/p99, a file's frames/s
	$(BIN) bench samples/Megamind.avi --resize 1280x720 --pipeline-detector fast --detect-every 5 --detect-every 8 --repeat 2 --reframe 9:16

soak: release
	$(BIN) bench samples/vtest.avi --resize 1280x720 --no-python --pipeline-detector fast --detect-every 8 --soak 10

# Identity stability on vtest.avi and the speaking signal on carphone_pristine.mp4.
metrics: release
	@mkdir -p $(OUT)
	$(BIN) track samples/vtest.avi --sequential-identifiers --states $(OUT)/metrics-vtest.jsonl
	python3 tools/tracking_metrics.py identities $(OUT)/metrics-vtest.jsonl 768 576 10
	for n in 5 8; do $(BIN) track samples/vtest.avi -d fast --detect-every $$n --no-face-cues --sequential-identifiers --states $(OUT)/metrics-vtest-fast-$$n.jsonl; \
	  echo "fast, detect every $$n:"; python3 tools/tracking_metrics.py identities $(OUT)/metrics-vtest-fast-$$n.jsonl 768 576 10 | tail -1; done
	$(BIN) track samples/carphone_pristine.mp4 --sequential-identifiers --states $(OUT)/metrics-carphone.jsonl
	python3 tools/tracking_metrics.py speaking $(OUT)/metrics-carphone.jsonl

# Installs docktrack and docksim (the Swift runtime linked in: they run without the toolchain),
# the models they load (PREFIX/share/docktrack/models, found from PREFIX/bin), the inference
# engine's libraries (PREFIX/lib/docktrack/openvino, found from PREFIX/bin), shell completions
# and man pages (both generated by swift-argument-parser). DESTDIR is prepended for packaging.
PREFIX ?= /usr/local
MANUALS = .build/plugins/GenerateManual/outputs
install: deps
	$(SWIFT) package --allow-writing-to-package-directory generate-manual --multi-page
	$(SWIFT) build -c release --static-swift-stdlib --product docktrack
	$(SWIFT) build -c release --static-swift-stdlib --product docksim
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/docktrack/models $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 .build/release/docktrack .build/release/docksim $(DESTDIR)$(PREFIX)/bin/
	install -m 644 models/* $(DESTDIR)$(PREFIX)/share/docktrack/models/
	install -d $(DESTDIR)$(PREFIX)/lib/docktrack/openvino $(DESTDIR)$(PREFIX)/share/doc/docktrack/openvino
	install -m 644 .openvino/libs/* $(DESTDIR)$(PREFIX)/lib/docktrack/openvino/
	cp -r .openvino/licenses/. $(DESTDIR)$(PREFIX)/share/doc/docktrack/openvino/
	install -m 644 $$(ls $(MANUALS)/*/*.1 | grep -v '\.help\.1$$') $(DESTDIR)$(PREFIX)/share/man/man1/
	for tool in docktrack docksim; do \
	  .build/release/$$tool --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$tool; \
	  .build/release/$$tool --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$tool; \
	  .build/release/$$tool --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$tool.fish; \
	done
	@echo "installed in $(DESTDIR)$(PREFIX): bin/docktrack, bin/docksim, share/docktrack/models, man pages, completions"

clean:
	rm -rf .build .build-address .build-thread .build-fuzz .openvino $(OUT)

# DockTrack's own modules rebuilt from scratch (dependencies kept). Needed after a stored property
# of a public type changes: SwiftPM's incremental build was seen to keep a module that embeds the
# old layout, and the binary then corrupts its memory.
clean-modules:
	rm -rf .build/*/*/DockTrack*.build .build/*/*/docktrack.build .build/*/*/docksim.build \
	  .build/*/*/dock-client-example.build .build/*/*/dockkit-samples.build .build/*/*/DockTrackPackageTests.build
	touch Package.swift
