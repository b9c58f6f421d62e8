#include <cstdio>
#include <cstdint>
#include <cmath>
__global__ void k(const float* av, const float* bv, float* out, uint32_t* cv, int n) {
  int lane = threadIdx.x;
  for (int i = 0; i < n; ++i) {
    // A 16x8 row, B 8x8 col: lane 0 holds a[0] = A(0,0), b[0] = B(0,0).
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    float d[4] = {0, 0, 0, 0};
    if (lane == 0) { a[0] = __float_as_uint(av[i]); b[0] = __float_as_uint(bv[i]); }
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    if (lane == 0) {
      out[i] = d[0];
      uint32_t c; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(c) : "f"(av[i])); cv[i] = c;
    }
  }
}
int main() {
  const int n = 8;
  float a[n] = {ldexpf(1.5f, -127), ldexpf(1.0f, -130), ldexpf(1.0f + 1.0f/1024, -130), ldexpf(1.0f, -136), ldexpf(1.0f, -140), ldexpf(1.0f, -126), ldexpf(1.75f, -120), ldexpf(1.0f,-100)};
  float b[n] = {ldexpf(1,100), ldexpf(1,100), ldexpf(1,100), ldexpf(1,100), ldexpf(1,100), ldexpf(1,100), ldexpf(1,100), ldexpf(1,-30)};
  float *da, *db, *dout; uint32_t* dc;
  cudaMalloc(&da, sizeof a); cudaMalloc(&db, sizeof b); cudaMalloc(&dout, sizeof a); cudaMalloc(&dc, 4 * n);
  cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice); cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
  k<<<1, 32>>>(da, db, dout, dc, n);
  float out[n]; uint32_t c[n];
  cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost); cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
  for (int i = 0; i < n; ++i) printf("a=%a b=%a  mma=%a expect=%a  cvt.rna(a)=%a\n", a[i], b[i], out[i], (double)a[i] * b[i], __builtin_bit_cast(float, c[i]));
}
