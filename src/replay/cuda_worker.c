/* clustersim-cuda-worker: one worker of the "cuda" backend (backend_cuda.c),
 * a process of its own so that an MPS share applies to it alone (the
 * backend sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE in its environment).
 *
 *   clustersim-cuda-worker --device N --layers L --width D --max-batch B
 *                          --input-bytes I --output-bytes O
 *
 * Allocates L single-precision D x D weight matrices on device N and, per
 * batch of b, copies b x I bytes to the device, runs L cuBLAS products
 * (D x D) . (D x b), copies b x O bytes back and synchronizes: a model sized
 * as the cpu backend's, with the copies a profiled latency includes.
 *
 * Protocol, one line each way: it prints "ready" once set up, then answers
 * each "run B" with "done" and exits on "quit" or end of input; any failure
 * prints "error: WHAT" and exits with status 1.
 *
 * NEVER RUN ON A GPU: this program has been compiled against CUDA 13.0 but
 * the machines it was written on have no GPU; on them it reports the CUDA
 * runtime's error at set-up (docs/replay.md). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const char *detail)
{
  printf("error: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  fflush(stdout);
  return 1;
}

static int cuda_fail(const char *what, cudaError_t e)
{
  return fail(what, cudaGetErrorString(e));
}

static long arg(int argc, char **argv, const char *name, long min, long max, int *bad)
{
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], name) == 0) {
      char *end = NULL;
      long v = strtol(argv[i + 1], &end, 10);
      if (end != argv[i + 1] && *end == '\0' && v >= min && v <= max)
        return v;
    }
  *bad = 1;
  return 0;
}

int main(int argc, char **argv)
{
  int bad = 0;
  int device = (int)arg(argc, argv, "--device", 0, 1024, &bad);
  int layers = (int)arg(argc, argv, "--layers", 1, 100000, &bad);
  int width = (int)arg(argc, argv, "--width", 16, 16384, &bad);
  int max_batch = (int)arg(argc, argv, "--max-batch", 1, 1 << 20, &bad);
  long in_bytes = arg(argc, argv, "--input-bytes", 0, 1L << 30, &bad);
  long out_bytes = arg(argc, argv, "--output-bytes", 0, 1L << 30, &bad);
  if (bad)
    return fail("usage", "--device N --layers L --width D --max-batch B --input-bytes I "
                         "--output-bytes O");
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return cuda_fail("cudaSetDevice", e);
  size_t d = (size_t)width;
  float *weights = NULL, *act[2] = { NULL, NULL };
  void *in_dev = NULL, *out_dev = NULL, *in_host = NULL, *out_host = NULL;
  size_t in_total = (size_t)max_batch * (size_t)in_bytes, out_total = (size_t)max_batch * (size_t)out_bytes;
  if ((e = cudaMalloc((void **)&weights, (size_t)layers * d * d * sizeof(float))) != cudaSuccess ||
      (e = cudaMalloc((void **)&act[0], (size_t)max_batch * d * sizeof(float))) != cudaSuccess ||
      (e = cudaMalloc((void **)&act[1], (size_t)max_batch * d * sizeof(float))) != cudaSuccess ||
      (e = cudaMalloc(&in_dev, in_total ? in_total : 1)) != cudaSuccess ||
      (e = cudaMalloc(&out_dev, out_total ? out_total : 1)) != cudaSuccess ||
      (e = cudaMallocHost(&in_host, in_total ? in_total : 1)) != cudaSuccess ||
      (e = cudaMallocHost(&out_host, out_total ? out_total : 1)) != cudaSuccess)
    return cuda_fail("allocating the model", e);
  /* Zeros: the products' time does not depend on the values. */
  if ((e = cudaMemset(weights, 0, (size_t)layers * d * d * sizeof(float))) != cudaSuccess ||
      (e = cudaMemset(act[0], 0, (size_t)max_batch * d * sizeof(float))) != cudaSuccess)
    return cuda_fail("initialising the model", e);
  memset(in_host, 0, in_total ? in_total : 1);
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
    return fail("cublasCreate", NULL);
  printf("ready\n");
  fflush(stdout);
  char line[64];
  const float one = 1.0f, zero = 0.0f;
  while (fgets(line, sizeof line, stdin)) {
    if (strncmp(line, "quit", 4) == 0)
      break;
    int b = 0;
    if (sscanf(line, "run %d", &b) != 1 || b < 1 || b > max_batch)
      return fail("expected \"run B\" with 1 <= B <= max batch, got", line);
    size_t in_n = (size_t)b * (size_t)in_bytes, out_n = (size_t)b * (size_t)out_bytes;
    if (in_n && (e = cudaMemcpy(in_dev, in_host, in_n, cudaMemcpyHostToDevice)) != cudaSuccess)
      return cuda_fail("copying the inputs", e);
    for (int l = 0; l < layers; l++)
      if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, width, b, width, &one, weights + (size_t)l * d * d,
                      width, act[l & 1], width, &zero, act[(l + 1) & 1], width) !=
          CUBLAS_STATUS_SUCCESS)
        return fail("cublasSgemm", NULL);
    if (out_n && (e = cudaMemcpy(out_host, out_dev, out_n, cudaMemcpyDeviceToHost)) != cudaSuccess)
      return cuda_fail("copying the results", e);
    if ((e = cudaDeviceSynchronize()) != cudaSuccess)
      return cuda_fail("cudaDeviceSynchronize", e);
    printf("done\n");
    fflush(stdout);
  }
  cublasDestroy(h);
  cudaFree(weights);
  cudaFree(act[0]);
  cudaFree(act[1]);
  cudaFree(in_dev);
  cudaFree(out_dev);
  cudaFreeHost(in_host);
  cudaFreeHost(out_host);
  return 0;
}
