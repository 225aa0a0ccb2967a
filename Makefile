# robocache — the two commands a user needs:
#   make demo   install dependencies, build, align the EuRoC V1_01_easy flight in data/
#   make test   install dependencies, build, run every test (C, C under ASan+UBSan, Python, CLI)
# Both run scripts/install-deps.sh first (apt-get + pip; safe to repeat).

BUILD      ?= build
ASAN_BUILD ?= build-asan
CMAKE_ARGS ?=
PYTHON     ?= python3
JOBS       ?= $(shell nproc)
DEMO_OUT   ?= out

.PHONY: all deps build demo test test-c test-asan test-python bench format clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DROBOCACHE_WERROR=ON $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)/robocache $(DEMO_OUT)

test: build test-c test-asan test-python

test-c:
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DROBOCACHE_WERROR=ON \
	  -DROBOCACHE_CUDA=OFF -DROBOCACHE_SANITIZE=address,undefined -DROBOCACHE_BUILD_BENCH=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

test-python: build
	$(PYTHON) -m pip install -q --disable-pip-version-check --no-build-isolation \
	  --config-settings=cmake.define.ROBOCACHE_CUDA=OFF .
	bash scripts/install-lerobot-oracle.sh
	ROBOCACHE_BIN=$(abspath $(BUILD))/robocache $(PYTHON) -m pytest -q tests/python tests/cli

bench: build
	$(PYTHON) bench/bench_resample_cpu.py --bin $(BUILD)/bench/bench_resample_cpu

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu' '*.cuh')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
