// The harness's timing, ladder::time_launches (device.cuh), on the CPU.
//
// time_launches records a CUDA event, launches `reps` times, records another
// and divides the elapsed time by `reps`. Its arithmetic needs no GPU, only
// the four CUDA calls it makes: this file puts fakes in their place (a
// simulated stream clock that each launch advances) by renaming the calls
// before device.cuh is included, so the function tested is the harness's own
// text, compiled as the chapters compile it.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace fake_gpu {
double clock_ms = 0;  // the simulated stream's clock
int launches = 0;
double stamps[2] = {0, 0};  // what the two fake events recorded

cudaEvent_t event(int i) { return reinterpret_cast<cudaEvent_t>(&stamps[i]); }
cudaError_t record(cudaEvent_t e, cudaStream_t = nullptr) {
  *reinterpret_cast<double*>(e) = clock_ms;
  return cudaSuccess;
}
cudaError_t synchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t elapsed(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  *ms = static_cast<float>(*reinterpret_cast<double*>(stop) - *reinterpret_cast<double*>(start));
  return cudaSuccess;
}
cudaError_t last_error() { return cudaSuccess; }
}  // namespace fake_gpu

#define cudaEventRecord fake_gpu::record
#define cudaEventSynchronize fake_gpu::synchronize
#define cudaEventElapsedTime fake_gpu::elapsed
#define cudaGetLastError fake_gpu::last_error
#include "ladder/device.cuh"
#undef cudaEventRecord
#undef cudaEventSynchronize
#undef cudaEventElapsedTime
#undef cudaGetLastError

namespace {

// Each launch takes `ms_per_launch` of the stream's time.
double time_with(int reps, double ms_per_launch) {
  fake_gpu::launches = 0;
  fake_gpu::clock_ms = 100.0;  // the clock does not start at zero
  auto launch = [&] {
    ++fake_gpu::launches;
    fake_gpu::clock_ms += ms_per_launch;
  };
  return ladder::time_launches(launch, reps, nullptr, fake_gpu::event(0), fake_gpu::event(1));
}

TEST(Timing, TimeLaunchesIsTheTimePerLaunch) {
  // 8 launches of 0.25 ms: 2 ms between the events, 0.25 ms per launch.
  EXPECT_DOUBLE_EQ(time_with(8, 0.25), 0.25);
  EXPECT_EQ(fake_gpu::launches, 8);
  // 5 launches of 1.5 ms, as the measure command's 5 repetitions: 7.5 ms, 1.5 each.
  EXPECT_DOUBLE_EQ(time_with(5, 1.5), 1.5);
  EXPECT_EQ(fake_gpu::launches, 5);
  // One launch is its own time.
  EXPECT_DOUBLE_EQ(time_with(1, 3.0), 3.0);
  EXPECT_EQ(fake_gpu::launches, 1);
}

}  // namespace
