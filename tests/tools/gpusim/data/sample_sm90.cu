extern "C" __global__ void vadd(const float* x, const float* y, float* out, int n){
  int i = blockIdx.x*blockDim.x+threadIdx.x; if(i<n) out[i]=x[i]+y[i];}
extern "C" __global__ void red(const float* x, float* out, int n){
  __shared__ float s[256]; int t=threadIdx.x; int i=blockIdx.x*blockDim.x+t;
  s[t]= i<n? x[i]:0.f; __syncthreads();
  for(int k=blockDim.x/2;k>0;k>>=1){ if(t<k) s[t]+=s[t+k]; __syncthreads();}
  if(t==0) atomicAdd(out, s[0]);}
extern "C" __global__ void wred(const float* x, float* out, int n){
  int i = blockIdx.x*blockDim.x+threadIdx.x; float v = i<n? x[i]:0.f;
  for(int o=16;o>0;o>>=1) v+=__shfl_down_sync(0xffffffff,v,o);
  unsigned b = __ballot_sync(0xffffffff, v>0); if((threadIdx.x&31)==0){ out[i/32]=v; }
  extern __shared__ float dyn[]; dyn[threadIdx.x]=expf(v)+tanhf(v)+rsqrtf(v)+__popc(b); }
extern "C" __global__ void gelu(const float* x, float* y, int n){
  int i = blockIdx.x*blockDim.x+threadIdx.x; if(i<n){ float v=x[i]; y[i]=0.5f*v*(1.f+tanhf(0.7978845608f*(v+0.044715f*v*v*v)));}}
extern "C" __global__ void dbl(const double* x, double* y, long n, unsigned char c){
  long i = blockIdx.x*(long)blockDim.x+threadIdx.x; if(i<n){ y[i]=sqrt(x[i])/3.0 + (double)c + sin(x[i]);}}
