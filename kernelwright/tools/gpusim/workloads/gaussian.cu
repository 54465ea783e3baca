// Rodinia gaussian elimination: Fan1 (multipliers) and Fan2 (row updates) per column t.
extern "C" __global__ void fan1(float* mult, const float* a, int n, int t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n - 1 - t) return;
  mult[n * (i + t + 1) + t] = a[n * (i + t + 1) + t] / a[n * t + t];
}

extern "C" __global__ void fan2(const float* mult, float* a, float* b, int n, int t) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= n - 1 - t || y >= n - t) return;
  a[n * (x + 1 + t) + (y + t)] -= mult[n * (x + 1 + t) + t] * a[n * t + (y + t)];
  if (y == 0) b[x + 1 + t] -= mult[n * (x + 1 + t) + t] * b[t];
}
