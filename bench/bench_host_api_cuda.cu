/* What the CUDA runtime calls that a robocache call makes cost the host:
 *
 *   bench_host_api_cuda [BYTES]
 *
 * Each call below is issued CALLS times back to back on a non-blocking
 * stream (the stream synchronised between rounds), ROUNDS rounds; prints one
 * JSON object with the median host time per call in microseconds of:
 * cudaGetDevice, cudaDeviceGetAttribute (compute capability), cudaStreamIsCapturing,
 * an empty kernel launched as the library launches its kernels (cudaLaunchKernelEx,
 * with and without the programmatic dependent launch attribute), two such launches,
 * and a cudaMemsetAsync of BYTES (default 8388608, the int32 128^3 grid of a
 * voxelize COUNT call). Only the CUDA runtime is called: no robocache code. */
#include "bench_cuda_check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CALLS 1000
#define ROUNDS 21

__global__ void empty_kernel(int *p) {
  if (p && threadIdx.x == 1024) *p = 0; /* never true: keeps the parameter */
}

/* An empty kernel launched the way the library launches its kernels: by
 * cudaLaunchKernelEx, as a programmatic dependent launch of the previous
 * kernel on the stream when `pdl` (docs/cuda.md, "Chained calls"). */
static cudaError_t launch(cudaStream_t st, bool pdl) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1);
  config.blockDim = dim3(32);
  config.stream = st;
  config.attrs = &attr;
  config.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&config, empty_kernel, (int *)nullptr);
}

/* Median over ROUNDS of the host time per call of CALLS calls of f (us). */
template <class F> static double per_call_us(cudaStream_t st, F f) {
  std::vector<double> t;
  for (int r = 0; r < ROUNDS; r++) {
    CHECK(cudaStreamSynchronize(st));
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < CALLS; i++) CHECK(f());
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / CALLS);
  }
  CHECK(cudaStreamSynchronize(st));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  const size_t bytes = argc > 1 ? strtoull(argv[1], nullptr, 10) : (size_t)8 << 20;
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  void *buf = nullptr;
  CHECK(cudaMalloc(&buf, bytes));
  int dev = 0, v = 0;
  cudaStreamCaptureStatus cs;
  const double get_device = per_call_us(st, [&] { return cudaGetDevice(&dev); });
  const double attribute = per_call_us(
      st, [&] { return cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev); });
  const double capturing = per_call_us(st, [&] { return cudaStreamIsCapturing(st, &cs); });
  const double plain = per_call_us(st, [&] { return launch(st, false); });
  const double pdl = per_call_us(st, [&] { return launch(st, true); });
  const double two = per_call_us(st, [&] {
    cudaError_t e = launch(st, true);
    return e == cudaSuccess ? launch(st, true) : e;
  });
  const double memset = per_call_us(st, [&] { return cudaMemsetAsync(buf, 0, bytes, st); });
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  printf("{\"device\": \"%s\", \"calls\": %d, \"rounds\": %d, \"get_device_us\": %.3f, "
         "\"device_attribute_us\": %.3f, \"stream_is_capturing_us\": %.3f, "
         "\"launch_us\": %.3f, \"launch_pdl_us\": %.3f, \"two_launches_pdl_us\": %.3f, "
         "\"memset_bytes\": %zu, \"memset_us\": %.3f}\n",
         prop.name, CALLS, ROUNDS, get_device, attribute, capturing, plain, pdl, two, bytes,
         memset);
  CHECK(cudaFree(buf));
  CHECK(cudaStreamDestroy(st));
  return 0;
}
