// Small kernels for the emulator tests (compiled with nvcc -ptx at test time).
extern "C" __global__ void vadd(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}

extern "C" __global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void warp_sum(const float* x, float* out, unsigned* ballots, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  float first = __shfl_sync(0xffffffff, v, 0);
  float up = __shfl_up_sync(0xffffffff, first, 1);
  float bf = __shfl_xor_sync(0xffffffff, up, 1);
  unsigned b = __ballot_sync(0xffffffff, i < n && x[i] > 0.5f);
  int any = __any_sync(0xffffffff, i < n && x[i] > 0.99f);
  int all = __all_sync(0xffffffff, i < n);
  if ((threadIdx.x & 31) == 0) {
    out[i / 32] = bf;
    ballots[3 * (i / 32)] = b;
    ballots[3 * (i / 32) + 1] = any;
    ballots[3 * (i / 32) + 2] = all;
  }
}

extern "C" __global__ void diverge(const int* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = x[i];
  int acc = 0;
  if ((threadIdx.x & 31) < 16) {
    acc = v * 3;
    if (v & 1) acc += 7; else acc -= 5;
  } else {
    for (int k = 0; k < (v & 7); ++k) acc += k * v;
  }
  out[i] = acc + 1;
}

extern "C" __global__ void atomics(const int* keys, int* hist, int* mx, unsigned* counter,
                                   int* slots, float* fsum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int k = keys[i];
  atomicAdd(&hist[k], 1);
  atomicMax(mx, k * 1000 + (i % 1000));
  unsigned pos = atomicAdd(counter, 1u);
  slots[pos] = i;
  atomicAdd(fsum, 0.5f);
  atomicCAS(&hist[16], 0, 1);
}

#define TILE 16
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N,
                                        int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

extern "C" __global__ void softmax_rows(const float* x, float* y, int cols) {
  extern __shared__ float red[];
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(xr[c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float inv = 1.f / red[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;
}

extern "C" __global__ void layernorm_rows(const float* x, const float* g, const float* b,
                                          float* y, int cols, float eps) {
  __shared__ float s1[32], s2[32];
  const float* xr = x + blockIdx.x * cols;
  float a = 0.f, q = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) { float v = xr[c]; a += v; q += v * v; }
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(0xffffffff, a, o);
    q += __shfl_xor_sync(0xffffffff, q, o);
  }
  int w = threadIdx.x / 32, l = threadIdx.x % 32;
  if (l == 0) { s1[w] = a; s2[w] = q; }
  __syncthreads();
  if (w == 0) {
    int nw = blockDim.x / 32;
    a = l < nw ? s1[l] : 0.f; q = l < nw ? s2[l] : 0.f;
    for (int o = 16; o > 0; o >>= 1) {
      a += __shfl_xor_sync(0xffffffff, a, o);
      q += __shfl_xor_sync(0xffffffff, q, o);
    }
    if (l == 0) { s1[0] = a; s2[0] = q; }
  }
  __syncthreads();
  float mean = s1[0] / cols, var = s2[0] / cols - mean * mean, r = rsqrtf(var + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    y[blockIdx.x * cols + c] = (xr[c] - mean) * r * g[c] + b[c];
}

extern "C" __global__ void local_array(const int* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int buf[8];
  for (int k = 0; k < 8; ++k) buf[k] = x[i] * k;
  out[i] = buf[x[i] & 7];
}

extern "C" __global__ void conversions(const float* x, int* iout, float* fout,
                                       unsigned char* bout, double* dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  iout[2 * i] = __float2int_rn(v);
  iout[2 * i + 1] = (int)v;
  fout[2 * i] = floorf(v) + ceilf(v) * 0.5f + fminf(v, 1.5f) + sqrtf(fabsf(v));
  fout[2 * i + 1] = __saturatef(v) + (float)(unsigned)(i * 7u % 5u) + tanhf(v) + log2f(fabsf(v) + 1.f);
  bout[i] = (unsigned char)(i * 37);
  dout[i] = (double)v * 3.0 + (double)(long long)(i - 5) / 7.0;
}

#include <cuda_fp16.h>
extern "C" __global__ void int_ops(const int* a, const int* b, unsigned* out, long long* wide,
                                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  unsigned ux = (unsigned)x, uy = (unsigned)y;
  unsigned* o = out + 12 * i;
  o[0] = __popc(ux);
  o[1] = __clz(x);
  o[2] = __brev(ux);
  o[3] = (unsigned)(x / (y | 1));
  o[4] = (unsigned)(x % (y | 1));
  o[5] = ux / (uy | 1u) + ux % (uy | 1u);
  o[6] = __umulhi(ux, uy);
  o[7] = (unsigned)__mulhi(x, y);
  o[8] = (unsigned)(max(x, y) - min(x, y) + abs(x));
  o[9] = (ux >> (uy & 31)) ^ (ux << (uy & 7)) ^ (unsigned)(x >> (uy & 31));
  o[10] = __byte_perm(ux, uy, 0x5140);
  o[11] = (unsigned)((signed char)(x & 0xff)) + (unsigned short)(y * 3);
  long long lx = (long long)x * 1000003LL, ly = (long long)y;
  wide[2 * i] = lx / (ly | 1) + (lx >> 7) + (long long)((unsigned long long)lx % 97ULL);
  wide[2 * i + 1] = __mul64hi(lx, ly * 123456789LL) + __popcll(lx) + __clzll(lx);
}

extern "C" __global__ void half_ops(const float* x, float* y, __half* h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half a = __float2half(x[i]), b = __float2half(0.5f);
  __half c = __hadd(__hmul(a, b), b);
  h[i] = c;
  y[i] = __half2float(c) + __half2float(__hmax(a, b));
}

extern "C" __global__ void generic_ptr(float* g, float* out, int n) {
  __shared__ float s[64];
  int i = threadIdx.x;
  float* p = (i & 1) ? s : g;  // generic addressing: odd lanes shared, even lanes global
  s[i] = (float)i;
  __syncthreads();
  p[i] += 1.0f;
  if (i < n) out[i] = p[i];
}

#include <cuda_bf16.h>
extern "C" __global__ void misc_ops(const unsigned* a, const unsigned* b, const float* f,
                                    unsigned* out, __nv_bfloat16* bf, float* fo, int n) {
  __shared__ float s[64];
  int i = threadIdx.x;
  if (i < n) {
    out[3 * i] = __funnelshift_l(a[i], b[i], i);
    out[3 * i + 1] = __funnelshift_r(a[i], b[i], i);
    out[3 * i + 2] = (unsigned)__dp4a((int)a[i], (int)b[i], 7);
    __nv_bfloat16 h = __float2bfloat16(f[i]);
    bf[i] = h;
    fo[i] = __bfloat162float(h) * 2.f;
  }
  unsigned saddr = (unsigned)__cvta_generic_to_shared(&s[i]);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(saddr), "l"(f + i));
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();
  fo[64 + i] = s[63 - i];
}

#include <cstdio>
extern "C" __global__ void with_printf(float* x, int n) {
  int i = threadIdx.x;
  if (i == 0) printf("x0=%f n=%d\n", x[0], n);
  if (i < n) x[i] *= 2.f;
}
