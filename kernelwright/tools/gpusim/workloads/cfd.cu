// cfd-like explicit solver on an unstructured mesh (Rodinia euler3d shape): 3 setup launches,
// then per iteration one copy/step-factor launch and 3 Runge-Kutta stages of flux + time step.
#define NNB 4
#define NVAR 5

extern "C" __global__ void cfd_initialize(float* vars, const float* ff, int nelr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nelr) return;
  float bump = 1.f + 0.01f * (float)(i % 17);
  for (int v = 0; v < NVAR; v++) vars[v * nelr + i] = ff[v] * bump;
}

extern "C" __global__ void cfd_far_field(const float* ff, float* ff_flux) {
  int v = threadIdx.x;
  if (v < NVAR) ff_flux[v] = 0.5f * ff[v];
}

extern "C" __global__ void cfd_copy(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

extern "C" __global__ void cfd_step_factor(const float* vars, float* old, const float* areas,
                                           float* step, int nelr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nelr) return;
  for (int v = 0; v < NVAR; v++) old[v * nelr + i] = vars[v * nelr + i];
  float rho = vars[i], mx = vars[nelr + i], my = vars[2 * nelr + i], mz = vars[3 * nelr + i];
  float e = vars[4 * nelr + i];
  float m2 = mx * mx + my * my + mz * mz;
  float p = 0.4f * (e - 0.5f * m2 / rho);
  float c = sqrtf(1.4f * p / rho);
  step[i] = 0.5f / (sqrtf(areas[i]) * (sqrtf(m2) / rho + c));
}

extern "C" __global__ void cfd_flux(const float* vars, const int* nbr, const float* normals,
                                    const float* ff_flux, float* flux, int nelr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nelr) return;
  float acc[NVAR];
  for (int v = 0; v < NVAR; v++) acc[v] = 0.f;
  for (int k = 0; k < NNB; k++) {
    int j = nbr[i * NNB + k];
    float w = normals[i * NNB + k];
    if (j >= 0) {
      for (int v = 0; v < NVAR; v++) acc[v] += w * (vars[v * nelr + j] - vars[v * nelr + i]);
    } else {
      for (int v = 0; v < NVAR; v++) acc[v] += w * (ff_flux[v] - 0.5f * vars[v * nelr + i]);
    }
  }
  for (int v = 0; v < NVAR; v++) flux[v * nelr + i] = acc[v];
}

extern "C" __global__ void cfd_time_step(int stage, float* vars, const float* old,
                                         const float* step, const float* flux, int nelr) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nelr) return;
  float f = step[i] / (float)(3 - stage);
  for (int v = 0; v < NVAR; v++) vars[v * nelr + i] = old[v * nelr + i] + f * flux[v * nelr + i];
}
