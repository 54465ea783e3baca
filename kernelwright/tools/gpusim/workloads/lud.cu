// Blocked LU decomposition without pivoting (Rodinia lud shape): per 16-wide step a diagonal,
// a perimeter and an internal kernel, then a last diagonal: 3 (N/16 - 1) + 1 launches.
#define BS 16

extern "C" __global__ void lud_diagonal(float* m, int n, int off) {
  __shared__ float s[BS][BS];
  int t = threadIdx.x;
  for (int i = 0; i < BS; i++) s[i][t] = m[(off + i) * n + off + t];
  __syncthreads();
  for (int i = 0; i < BS - 1; i++) {
    if (t > i) {
      float l = s[t][i] / s[i][i];
      s[t][i] = l;
      for (int j = i + 1; j < BS; j++) s[t][j] -= l * s[i][j];
    }
    __syncthreads();
  }
  for (int i = 0; i < BS; i++) m[(off + i) * n + off + t] = s[i][t];
}

extern "C" __global__ void lud_perimeter(float* m, int n, int off) {
  __shared__ float dia[BS][BS];
  __shared__ float row[BS][BS];  // U strip to the right of the diagonal block
  __shared__ float col[BS][BS];  // L strip below it
  int t = threadIdx.x;  // 2 * BS threads
  int blk = off + (blockIdx.x + 1) * BS;
  if (t < BS) {
    for (int i = 0; i < BS; i++) {
      dia[i][t] = m[(off + i) * n + off + t];
      row[i][t] = m[(off + i) * n + blk + t];
    }
  } else {
    int c = t - BS;
    for (int i = 0; i < BS; i++) col[c][i] = m[(blk + c) * n + off + i];
  }
  __syncthreads();
  if (t < BS) {  // forward substitution with the unit lower triangle: column t of U
    for (int i = 1; i < BS; i++)
      for (int k = 0; k < i; k++) row[i][t] -= dia[i][k] * row[k][t];
    for (int i = 0; i < BS; i++) m[(off + i) * n + blk + t] = row[i][t];
  } else {  // row c of L: solve against the upper triangle
    int c = t - BS;
    for (int j = 0; j < BS; j++) {
      float v = col[c][j];
      for (int k = 0; k < j; k++) v -= col[c][k] * dia[k][j];
      col[c][j] = v / dia[j][j];
    }
    for (int i = 0; i < BS; i++) m[(blk + c) * n + off + i] = col[c][i];
  }
}

extern "C" __global__ void lud_internal(float* m, int n, int off) {
  __shared__ float l[BS][BS];
  __shared__ float u[BS][BS];
  int tx = threadIdx.x, ty = threadIdx.y;
  int gi = off + (blockIdx.y + 1) * BS, gj = off + (blockIdx.x + 1) * BS;
  l[ty][tx] = m[(gi + ty) * n + off + tx];
  u[ty][tx] = m[(off + ty) * n + gj + tx];
  __syncthreads();
  float sum = 0.f;
  for (int k = 0; k < BS; k++) sum += l[ty][k] * u[k][tx];
  m[(gi + ty) * n + gj + tx] -= sum;
}
