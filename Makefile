# robocache — the two commands a user needs:
#   make demo   install what the demo needs (scripts/install-demo-deps.sh), build the
#               robocache command, align the EuRoC V1_01_easy flight in data/
#   make test   install everything (scripts/install-deps.sh: apt-get + pip), build, run
#               every test (C, C under ASan+UBSan, Python, CLI, the libFuzzer targets for
#               FUZZ_TEST_SECONDS each with their regression inputs)
#   make fuzz   the libFuzzer targets for longer (FUZZ_SECONDS each, FUZZ_JOBS at a time)
# Installing is safe to repeat. CUDA (scripts/cuda-cmake-args.sh): the backend is built
# for the GPU that nvidia-smi lists, or with CUDA=1 (no GPU: for the library's default
# architectures), never with CUDA=0; without a GPU, `make test` still compiles the CUDA
# code for sm_90 when nvcc exists, and `make demo` leaves it out.

BUILD      ?= build
ASAN_BUILD ?= build-asan
CMAKE_ARGS ?=
CUDA       ?= auto
PYTHON     ?= python3
JOBS       ?= $(shell nproc)
DEMO_OUT   ?= out
FUZZ_BUILD ?= build-fuzz
FUZZ_TEST_SECONDS ?= 30
FUZZ_SECONDS ?= 600
FUZZ_JOBS  ?= 2

CONFIGURE = cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DROBOCACHE_WERROR=ON

.PHONY: all deps demo-deps build demo test test-c test-asan test-python fuzz-build test-fuzz \
        fuzz bench format clean

all: build

deps:
	@bash scripts/install-deps.sh

demo-deps:
	@bash scripts/install-demo-deps.sh

build: deps
	cuda=$$(bash scripts/cuda-cmake-args.sh test $(CUDA)) && \
	  $(CONFIGURE) -DROBOCACHE_BUILD_TESTS=ON -DROBOCACHE_BUILD_BENCH=ON $$cuda $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: demo-deps
	cuda=$$(bash scripts/cuda-cmake-args.sh demo $(CUDA)) && \
	  $(CONFIGURE) -DROBOCACHE_BUILD_TESTS=OFF -DROBOCACHE_BUILD_BENCH=OFF -DROBOCACHE_HDF5=ON \
	  $$cuda $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS) --target robocache_cli
	@bash scripts/demo.sh $(BUILD)/robocache $(DEMO_OUT)

test: build test-c test-asan test-python test-fuzz

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

fuzz-build: deps
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DROBOCACHE_FUZZ=ON -DROBOCACHE_CUDA=OFF -DROBOCACHE_BUILD_TESTS=OFF \
	  -DROBOCACHE_BUILD_BENCH=OFF -DROBOCACHE_BUILD_CLI=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

test-fuzz: fuzz-build
	bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_TEST_SECONDS) $(FUZZ_JOBS)

fuzz: fuzz-build
	bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS)

bench: build
	$(PYTHON) bench/bench_resample_cpu.py --bin $(BUILD)/bench/bench_resample_cpu

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu' '*.cuh')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
