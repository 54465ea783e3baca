// Decoder-only transformer kernels (phi-2 / qwen1.5 / pythia shapes): rows are tokens.
#include <math.h>

extern "C" __global__ void embed(const int* tokens, const float* table, float* x, int d, int T) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < T * d) x[i] = table[tokens[i / d] * d + i % d];
}

__device__ float block_sum(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  int w = threadIdx.x / 32, l = threadIdx.x % 32;
  if (l == 0) red[w] = v;
  __syncthreads();
  v = l < blockDim.x / 32 ? red[l] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  __syncthreads();
  return v;
}

extern "C" __global__ void layernorm(const float* x, const float* g, const float* b, float* y,
                                     int d, float eps) {
  __shared__ float red[32];
  const float* xr = x + blockIdx.x * d;
  float s = 0.f;
  for (int c = threadIdx.x; c < d; c += blockDim.x) s += xr[c];
  float mean = block_sum(s, red) / d;
  float q = 0.f;
  for (int c = threadIdx.x; c < d; c += blockDim.x) q += (xr[c] - mean) * (xr[c] - mean);
  float r = rsqrtf(block_sum(q, red) / d + eps);
  for (int c = threadIdx.x; c < d; c += blockDim.x)
    y[blockIdx.x * d + c] = (xr[c] - mean) * r * g[c] + b[c];
}

extern "C" __global__ void rmsnorm(const float* x, const float* g, float* y, int d, float eps) {
  __shared__ float red[32];
  const float* xr = x + blockIdx.x * d;
  float q = 0.f;
  for (int c = threadIdx.x; c < d; c += blockDim.x) q += xr[c] * xr[c];
  float r = rsqrtf(block_sum(q, red) / d + eps);
  for (int c = threadIdx.x; c < d; c += blockDim.x) y[blockIdx.x * d + c] = xr[c] * r * g[c];
}

// Decode: one warp per output row, lanes stride over the input, shuffle reduction.
extern "C" __global__ void gemv(const float* W, const float* x, const float* bias, float* y,
                                int in, int out, int has_bias) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= out) return;
  float acc = 0.f;
  for (int i = lane; i < in; i += 32) acc += W[row * in + i] * x[i];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffff, acc, o);
  if (lane == 0) y[row] = acc + (has_bias ? bias[row] : 0.f);
}

// Prefill: Y[T, out] = X[T, in] . W[out, in]^T + bias, 16x16 shared-memory tiles.
extern "C" __global__ void gemm(const float* X, const float* W, const float* bias, float* Y,
                                int T, int in, int out, int has_bias) {
  __shared__ float xs[16][16];
  __shared__ float ws[16][16];
  int t = blockIdx.y * 16 + threadIdx.y, o = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < in; k0 += 16) {
    int kx = k0 + threadIdx.x;
    xs[threadIdx.y][threadIdx.x] = (t < T && kx < in) ? X[t * in + kx] : 0.f;
    int ow = blockIdx.x * 16 + threadIdx.y;
    ws[threadIdx.y][threadIdx.x] = (ow < out && kx < in) ? W[ow * in + kx] : 0.f;
    __syncthreads();
    for (int k = 0; k < 16; k++) acc += xs[threadIdx.y][k] * ws[threadIdx.x][k];
    __syncthreads();
  }
  if (t < T && o < out) Y[t * out + o] = acc + (has_bias ? bias[o] : 0.f);
}

// GPT-NeoX rotary embedding on the first rot dims of every head of q and k.
extern "C" __global__ void rotary(float* q, float* k, const float* inv_freq, int T, int heads,
                                  int hd, int rot, int pos0) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int half = rot / 2;
  if (i >= T * heads * half) return;
  int p = i % half, h = (i / half) % heads, t = i / (half * heads);
  float ang = (float)(pos0 + t) * inv_freq[p];
  float cs = __cosf(ang), sn = __sinf(ang);
  int base = t * heads * hd + h * hd;
  float q1 = q[base + p], q2 = q[base + p + half];
  q[base + p] = q1 * cs - q2 * sn;
  q[base + p + half] = q2 * cs + q1 * sn;
  float k1 = k[base + p], k2 = k[base + p + half];
  k[base + p] = k1 * cs - k2 * sn;
  k[base + p + half] = k2 * cs + k1 * sn;
}

extern "C" __global__ void kv_append(const float* k, const float* v, float* kc, float* vc, int T,
                                     int d, int pos0) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= T * d) return;
  kc[pos0 * d + i] = k[i];
  vc[pos0 * d + i] = v[i];
}

// scores[h, t, j] = q_t,h . k_j,h * scale for j <= pos0 + t (causal), -inf beyond.
extern "C" __global__ void attn_scores(const float* q, const float* kc, float* scores, int T,
                                       int heads, int hd, int L, int pos0, float scale) {
  int j = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y, h = blockIdx.z;
  if (j >= L) return;
  float* row = scores + (h * T + t) * L;
  if (j > pos0 + t) { row[j] = -INFINITY; return; }
  const float* qr = q + t * heads * hd + h * hd;
  const float* kr = kc + j * heads * hd + h * hd;
  float acc = 0.f;
  for (int c = 0; c < hd; c++) acc += qr[c] * kr[c];
  row[j] = acc * scale;
}

extern "C" __global__ void softmax(float* scores, int L) {
  __shared__ float red[32];
  float* row = scores + blockIdx.x * L;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < L; j += blockDim.x) m = fmaxf(m, row[j]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < blockDim.x / 32; w++) m = fmaxf(m, red[w]);
  __syncthreads();
  float s = 0.f;
  for (int j = threadIdx.x; j < L; j += blockDim.x) s += __expf(row[j] - m);
  float inv = 1.f / block_sum(s, red);
  for (int j = threadIdx.x; j < L; j += blockDim.x) row[j] = __expf(row[j] - m) * inv;
}

extern "C" __global__ void attn_out(const float* probs, const float* vc, float* out, int T,
                                    int heads, int hd, int L, int pos0) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= T * heads * hd) return;
  int c = i % hd, h = (i / hd) % heads, t = i / (hd * heads);
  const float* p = probs + (h * T + t) * L;
  float acc = 0.f;
  for (int j = 0; j <= pos0 + t; j++) acc += p[j] * vc[j * heads * hd + h * hd + c];
  out[i] = acc;
}

extern "C" __global__ void gelu(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  x[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}

extern "C" __global__ void silu_mul(const float* gate, const float* up, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float g = gate[i];
  out[i] = g / (1.f + __expf(-g)) * up[i];
}

extern "C" __global__ void residual_add(float* x, const float* a, const float* b, int n,
                                        int has_b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += a[i] + (has_b ? b[i] : 0.f);
}
