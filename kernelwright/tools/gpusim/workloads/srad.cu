// srad-like speckle-reducing anisotropic diffusion (Rodinia srad_v2): 2 launches per iteration.
extern "C" __global__ void srad_coeff(const float* J, float* C, float* dN, float* dS, float* dW,
                                      float* dE, int rows, int cols, float q0sqr) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  int k = r * cols + c;
  float jc = J[k];
  float n = J[(r > 0 ? r - 1 : 0) * cols + c] - jc;
  float s = J[(r < rows - 1 ? r + 1 : rows - 1) * cols + c] - jc;
  float w = J[r * cols + (c > 0 ? c - 1 : 0)] - jc;
  float e = J[r * cols + (c < cols - 1 ? c + 1 : cols - 1)] - jc;
  float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
  float l = (n + s + w + e) / jc;
  float num = 0.5f * g2 - 0.0625f * l * l;
  float den = 1.f + 0.25f * l;
  float qsqr = num / (den * den);
  den = (qsqr - q0sqr) / (q0sqr * (1.f + q0sqr));
  float cc = 1.f / (1.f + den);
  C[k] = cc < 0.f ? 0.f : (cc > 1.f ? 1.f : cc);
  dN[k] = n; dS[k] = s; dW[k] = w; dE[k] = e;
}

extern "C" __global__ void srad_update(float* J, const float* C, const float* dN, const float* dS,
                                       const float* dW, const float* dE, int rows, int cols,
                                       float lambda) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  int k = r * cols + c;
  float cs = C[(r < rows - 1 ? r + 1 : rows - 1) * cols + c];
  float ce = C[r * cols + (c < cols - 1 ? c + 1 : cols - 1)];
  float d = C[k] * dN[k] + cs * dS[k] + C[k] * dW[k] + ce * dE[k];
  J[k] = J[k] + 0.25f * lambda * d;
}
