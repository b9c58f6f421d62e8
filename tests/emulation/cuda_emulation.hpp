// A CPU emulation of the part of CUDA that the chapters' kernels use, so that
// their own kernels and launchers run, compiled by the host compiler, on a
// machine without a GPU (see README.md in this folder).
//
// Include this before a chapter's kernel header, and compile that header from
// the copy that launch_rewrite.py makes (its kernel<<<...>>>(...) launches
// turned into ::ladder_emulation::launch(...)(...) calls).
//
// The model:
//   * A launch runs the grid's blocks one after another, synchronously.
//   * A block's threads are fibers (ucontext to start each, then _setjmp and
//     _longjmp: detail::enter()) on one OS thread. Each runs
//     until it reaches __syncthreads() or returns; when every thread of the
//     block has reached the barrier, the next phase starts. Within a phase
//     the threads run one after another in the order of threadIdx, so a
//     missing barrier is not a race that may or may not show: a thread that
//     reads shared memory another thread has not yet written (or has already
//     overwritten) reads it so, every time.
//   * __shared__ arrays are function-local statics: one block runs at a time,
//     so a static is that block's shared memory. A kernel's
//     `extern __shared__` buffer is an array at namespace scope that the test
//     defines with LADDER_EMULATION_DYNAMIC_SHARED (the chapter's own block-
//     scope `extern` declaration then names it); it holds NaN at the start of
//     every block, so a read of shared memory nobody wrote shows in C.
//   * The CUDA runtime calls that launchers make on the host
//     (cudaFuncSetAttribute, cudaGetDevice, cudaDeviceGetAttribute,
//     cudaOccupancyMaxActiveBlocksPerMultiprocessor) are replaced by stand-ins
//     that succeed; the dynamic shared memory a launch asks for must have been
//     allowed with cudaFuncSetAttribute past 48 KiB, as on a GPU.
//   * __shfl_sync() is a rendezvous of the warp: a thread that calls it waits
//     until all 32 threads of its warp have called it, then each gets the
//     value of the lane it named. The threads of a block are in warps of 32
//     by their linear index, as on a GPU.
//   * A bad launch configuration, a block whose threads do not all reach the
//     same barriers, or a warp whose threads do not all reach the same
//     shuffle throws ladder_emulation::Error from the launch.
#pragma once

// Under a host compiler, CUDA's host_defines.h turns __global__, __device__
// and __host__ into nothing and __align__(n) into an alignment attribute.
#include <cuda_runtime.h>
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__CUDACC__) || defined(__CUDA_ARCH__)
#error "cuda_emulation.hpp is for the host compiler (g++ or clang++), not nvcc"
#endif

// ------------------------------------------------------- what the headers leave

// __launch_bounds__ is only defined for nvcc; it is a hint to the compiler.
#define __launch_bounds__(...)
// So is __noinline__ (a GCC attribute list left empty by it is still valid).
#ifndef __noinline__
#define __noinline__
#endif

// Shared memory. Static: one block runs at a time (see above). A test that
// includes a kernel with `extern __shared__` defines
// LADDER_EMULATION_EXTERN_SHARED first, which makes __shared__ empty
// (`extern static` does not parse): the kernel's `extern` declaration then
// names the buffer that LADDER_EMULATION_DYNAMIC_SHARED defines. Chapters 11
// and 12 have no other shared array; one in such a header would become
// per-thread, and its wrong results would show.
#undef __shared__
#if defined(LADDER_EMULATION_EXTERN_SHARED)
#define __shared__
#else
#define __shared__ static
#endif

namespace ladder_emulation {

/// A launch that CUDA would refuse, or a block that would hang or misbehave.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Bytes of shared memory a block may have without cudaFuncSetAttribute, and at most.
constexpr size_t kDefaultSharedBytes = 48 * 1024;
constexpr size_t kMaxSharedBytes = 227 * 1024;

namespace detail {

/// Where a suspended thread waits: at __syncthreads(), or at __shfl_sync().
enum class Wait { kNone, kBarrier, kShuffle };

/// One thread of the running block.
struct Fiber {
  ucontext_t context;  ///< its start (makecontext), and with swapcontext where it waits
  jmp_buf resume;      ///< where it waits, once it has started (see enter())
  bool started = false;
  uint3 index;
  bool finished = false;
  Wait wait = Wait::kNone;
  // A shuffle: the value this thread offers, the lane it reads, and (once the
  // warp is all there) the value it gets.
  uint64_t offered = 0;
  int source_lane = 0;
  uint64_t received = 0;
};

/// Per fiber: a stack. The kernels' locals are a few hundred floats at most.
constexpr size_t kStackBytes = 256 * 1024;

inline ucontext_t scheduler;                         // the launch's own context
inline jmp_buf scheduler_jump;                       // the same, for _longjmp
inline Fiber* current = nullptr;                     // the fiber running now, or none
inline const std::function<void()>* body = nullptr;  // the kernel call with its arguments

// Switching threads. swapcontext() saves and restores the signal mask, a
// system call each way, and a block switches at every barrier and every
// shuffle (chapter 14's emulated mma shuffles each element of its tiles):
// that was most of the emulation's time. So a fiber is started with
// setcontext() and from then on switches with _setjmp()/_longjmp(), which
// leave the mask alone. Where _FORTIFY_SOURCE checks longjmp (it refuses a
// jump to another stack), swapcontext() does every switch.
#if defined(_FORTIFY_SOURCE) && _FORTIFY_SOURCE > 0
constexpr bool kJumps = false;
#else
constexpr bool kJumps = true;
#endif

/// The scheduler runs fiber `f` until it waits or returns.
__attribute__((noinline)) inline void enter(Fiber& f) {
  if (!kJumps) {
    swapcontext(&scheduler, &f.context);
  } else if (_setjmp(scheduler_jump) == 0) {
    if (!f.started) {
      f.started = true;
      setcontext(&f.context);
    }
    _longjmp(f.resume, 1);
  }
}

/// The running fiber `f` waits: the scheduler runs on.
__attribute__((noinline)) inline void leave(Fiber& f) {
  if (!kJumps) {
    swapcontext(&f.context, &scheduler);
  } else if (_setjmp(f.resume) == 0) {
    _longjmp(scheduler_jump, 1);
  }
}

inline void fiber_main() {
  (*body)();
  current->finished = true;
  if (kJumps) _longjmp(scheduler_jump, 1);
  // Returning resumes uc_link: the scheduler.
}

/// The dynamic shared memory buffer, where a test defined one.
inline float* dynamic_shared = nullptr;
inline size_t dynamic_shared_bytes = 0;

/// Every kernel launched, in order, for a test that checks which ran.
inline std::vector<const void*>& launch_log() {
  static std::vector<const void*> kernels;
  return kernels;
}

/// cudaFuncAttributeMaxDynamicSharedMemorySize, per kernel, as set.
inline std::map<const void*, int>& max_dynamic_shared() {
  static std::map<const void*, int> bytes;
  return bytes;
}

inline std::string str(dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

}  // namespace detail

/// The kernels launched so far, in order (cleared by the caller at will).
inline std::vector<const void*>& launched_kernels() { return detail::launch_log(); }

/// Registers `buffer` (`bytes` long) as every kernel's dynamic shared memory.
inline bool register_dynamic_shared(float* buffer, size_t bytes) {
  detail::dynamic_shared = buffer;
  detail::dynamic_shared_bytes = bytes;
  return true;
}

/// __syncthreads(): the current fiber waits for the rest of its block.
inline void barrier() {
  if (detail::current == nullptr) std::abort();  // __syncthreads() outside a kernel
  detail::current->wait = detail::Wait::kBarrier;
  detail::leave(*detail::current);
}

/// __shfl_sync(0xffffffff, value, source_lane): the current fiber offers
/// `value` (8 bytes at most) and waits for its warp; returns the value that
/// lane `source_lane` of the warp offered.
template <class T>
T shuffle(unsigned mask, T value, int source_lane) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "a shuffle moves 8 bytes at most");
  detail::Fiber* self = detail::current;
  if (self == nullptr) std::abort();  // __shfl_sync() outside a kernel
  if (mask != 0xffffffffu) throw Error("__shfl_sync with a partial mask is not emulated");
  self->offered = 0;
  std::memcpy(&self->offered, &value, sizeof value);
  self->source_lane = source_lane;
  self->wait = detail::Wait::kShuffle;
  detail::leave(*self);
  T result;
  std::memcpy(&result, &self->received, sizeof result);
  return result;
}

}  // namespace ladder_emulation

// The built-in variables. Set by the emulator before it runs a thread.
inline uint3 threadIdx;
inline uint3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;

inline void __syncthreads() { ::ladder_emulation::barrier(); }

template <class T>
T __shfl_sync(unsigned mask, T value, int source_lane, int width = 32) {
  if (width != 32) throw ::ladder_emulation::Error("__shfl_sync with a width is not emulated");
  return ::ladder_emulation::shuffle(mask, value, source_lane);
}

/// The bits of a float as an unsigned int, and back (CUDA's device intrinsics).
inline unsigned int __float_as_uint(float x) {
  unsigned int u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline float __uint_as_float(unsigned int u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

namespace ladder_emulation {
namespace detail {

/// Completes every shuffle whose warp is all there: each waiting thread gets
/// the value its source lane offered, and runs on. Returns whether any did.
/// Throws Error for a warp some of whose threads wait at a shuffle while the
/// others wait at a barrier or have returned (on a GPU it would hang).
inline bool complete_shuffles(std::vector<Fiber>& fibers, bool stuck) {
  bool any = false;
  for (size_t first = 0; first < fibers.size(); first += 32) {
    const size_t end = std::min(fibers.size(), first + 32);
    size_t waiting = 0;
    for (size_t t = first; t < end; ++t) waiting += fibers[t].wait == Wait::kShuffle;
    if (waiting == 0) continue;
    if (waiting != 32) {
      if (!stuck) continue;  // the rest of the warp may still be on its way
      throw Error("block " + str(blockIdx) + ": " + std::to_string(waiting) + " threads of warp " +
                  std::to_string(first / 32) + " wait at __shfl_sync(), the other " +
                  std::to_string(end - first - waiting) + " do not");
    }
    for (size_t t = first; t < end; ++t) {
      const int source = fibers[t].source_lane;
      if (source < 0 || source >= 32)
        throw Error("__shfl_sync from lane " + std::to_string(source));
      fibers[t].received = fibers[first + size_t(source)].offered;
    }
    for (size_t t = first; t < end; ++t) fibers[t].wait = Wait::kNone;
    any = true;
  }
  return any;
}

/// Runs one block: every thread until it returns, in phases separated by
/// barriers; within a phase, every thread runs until it waits (at a barrier
/// or a shuffle) or returns, and the shuffles whose warps are all there are
/// completed, until every thread waits at the barrier or has returned.
/// Throws Error when, in one phase, some threads return while others wait at
/// a barrier (on a GPU that barrier would hang or misbehave).
inline void run_block(const std::function<void()>& kernel_call, dim3 block) {
  static std::vector<std::unique_ptr<char[]>> stacks;  // kept from launch to launch
  const unsigned threads = block.x * block.y * block.z;
  while (stacks.size() < threads) stacks.emplace_back(new char[kStackBytes]);

  std::vector<Fiber> fibers(threads);
  for (unsigned t = 0; t < threads; ++t) {
    Fiber& f = fibers[t];
    f.index = make_uint3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = stacks[t].get();
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &scheduler;
    makecontext(&f.context, fiber_main, 0);
  }
  body = &kernel_call;
  for (int phase = 0;; ++phase) {
    unsigned returned = 0;
    do {
      for (Fiber& f : fibers) {
        if (f.finished || f.wait != Wait::kNone) continue;
        current = &f;
        threadIdx = f.index;
        enter(f);
        if (f.finished) ++returned;
      }
      current = nullptr;
    } while (complete_shuffles(fibers, false));
    complete_shuffles(fibers, true);  // throws for a warp that cannot complete
    unsigned at_barrier = 0;
    for (Fiber& f : fibers) at_barrier += f.wait == Wait::kBarrier;
    if (at_barrier == 0) break;  // every thread has returned
    if (returned != 0) {
      throw Error("block " + str(blockIdx) + ": after barrier " + std::to_string(phase) + ", " +
                  std::to_string(returned) + " threads returned while " +
                  std::to_string(at_barrier) + " wait at __syncthreads()");
    }
    for (Fiber& f : fibers) f.wait = Wait::kNone;
  }
}

/// SIGSEGV or SIGBUS in a kernel: says which thread, then lets the signal
/// end the program (returning re-runs the access with the default action).
inline void on_fault(int signal_number) {
  if (current != nullptr) {
    char line[320];
    const int n = std::snprintf(
        line, sizeof line,
        "\nladder_emulation: %s in a kernel, block (%u, %u, %u), thread (%u, %u, %u): an "
        "address out of bounds, or a 16-byte access that is not 16-byte aligned\n",
        signal_number == SIGBUS ? "bus error" : "segmentation fault", blockIdx.x, blockIdx.y,
        blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
    if (n > 0) (void)!write(STDERR_FILENO, line, size_t(n));
  }
  signal(signal_number, SIG_DFL);
}

inline void report_faults() {
  static const bool installed = [] {
    signal(SIGSEGV, on_fault);
    signal(SIGBUS, on_fault);
    return true;
  }();
  (void)installed;
}

}  // namespace detail

/// A launch whose configuration is given: call it with the kernel's arguments.
/// It runs the whole grid before it returns.
template <class... Params>
class Launch {
 public:
  Launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem)
      : kernel_(kernel), grid_(grid), block_(block), smem_(smem) {}

  template <class... Args>
  void operator()(Args&&... args) const {
    static_assert(sizeof...(Args) == sizeof...(Params), "a kernel launch with the wrong arguments");
    check();
    detail::launch_log().push_back(reinterpret_cast<const void*>(kernel_));
    detail::report_faults();
    // The arguments converted to the kernel's parameter types, as a launch does.
    const std::tuple<Params...> params(std::forward<Args>(args)...);
    const std::function<void()> call = [&] { std::apply(kernel_, params); };
    gridDim = grid_;
    blockDim = block_;
    for (unsigned z = 0; z < grid_.z; ++z) {
      for (unsigned y = 0; y < grid_.y; ++y) {
        for (unsigned x = 0; x < grid_.x; ++x) {
          blockIdx = make_uint3(x, y, z);
          // Shared memory that nobody wrote reads as NaN, and NaN reaches C.
          if (detail::dynamic_shared != nullptr) {
            std::fill(detail::dynamic_shared,
                      detail::dynamic_shared + detail::dynamic_shared_bytes / sizeof(float),
                      std::numeric_limits<float>::quiet_NaN());
          }
          detail::run_block(call, block_);
        }
      }
    }
  }

 private:
  /// What CUDA checks before it launches: the limits of an sm_90 GPU.
  void check() const {
    const std::string what = "launch " + detail::str(grid_) + " x " + detail::str(block_) + ": ";
    const unsigned long long threads = 1ull * block_.x * block_.y * block_.z;
    if (threads == 0 || threads > 1024 || block_.z > 64) {
      throw Error(what + "a block must have 1 to 1024 threads (and z at most 64)");
    }
    if (grid_.x == 0 || grid_.y == 0 || grid_.z == 0 || grid_.x > 0x7fffffffu || grid_.y > 65535 ||
        grid_.z > 65535) {
      throw Error(what + "every grid dimension must be positive (y and z at most 65535)");
    }
    if (smem_ > 0) {
      if (detail::dynamic_shared == nullptr) {
        throw Error(what + "dynamic shared memory, but the test defined no buffer for it");
      }
      if (smem_ > detail::dynamic_shared_bytes || smem_ > kMaxSharedBytes) {
        throw Error(what + std::to_string(smem_) + " bytes of dynamic shared memory: too many");
      }
      const auto allowed =
          detail::max_dynamic_shared().find(reinterpret_cast<const void*>(kernel_));
      if (smem_ > kDefaultSharedBytes &&
          (allowed == detail::max_dynamic_shared().end() || size_t(allowed->second) < smem_)) {
        throw Error(what + std::to_string(smem_) +
                    " bytes of dynamic shared memory, past 48 KiB without cudaFuncSetAttribute");
      }
    }
  }

  void (*kernel_)(Params...);
  dim3 grid_, block_;
  size_t smem_;
};

/// `kernel<<<grid, block, smem, stream>>>(args...)`, rewritten by
/// launch_rewrite.py as `launch(kernel, grid, block, smem, stream)(args...)`.
template <class... Params>
Launch<Params...> launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem = 0,
                         cudaStream_t stream = nullptr) {
  (void)stream;  // blocks run at once, in order: every stream is synchronous
  return Launch<Params...>(kernel, grid, block, smem);
}

// ------------------------------------------------------ the runtime stand-ins

/// The GPU the stand-ins describe: an H200's SM count and per-SM limits.
constexpr int kMultiProcessors = 132;
constexpr int kMaxThreadsPerMultiProcessor = 2048;
constexpr int kSharedBytesPerMultiProcessor = 228 * 1024;

template <class Kernel>
cudaError_t func_set_attribute(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  if (attribute == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || size_t(value) > kMaxSharedBytes) return cudaErrorInvalidValue;
    detail::max_dynamic_shared()[reinterpret_cast<const void*>(kernel)] = value;
  }
  return cudaSuccess;
}

inline cudaError_t get_device(int* device) {
  *device = 0;
  return cudaSuccess;
}

inline cudaError_t device_get_attribute(int* value, cudaDeviceAttr attribute, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  switch (attribute) {
    case cudaDevAttrMultiProcessorCount:
      *value = kMultiProcessors;
      return cudaSuccess;
    default:
      return cudaErrorNotSupported;
  }
}

/// Blocks per SM as threads and shared memory allow (registers are not
/// modelled): a number of the right kind for the launchers that choose by it.
template <class Kernel>
cudaError_t occupancy_max_active_blocks(int* blocks, Kernel*, int threads, size_t smem) {
  if (threads < 1 || threads > 1024) return cudaErrorInvalidValue;
  int n = kMaxThreadsPerMultiProcessor / threads;
  if (smem > 0) n = std::min<int>(n, int(kSharedBytesPerMultiProcessor / (smem + 1024)));
  *blocks = std::min(n, 32);
  return cudaSuccess;
}

}  // namespace ladder_emulation

// The stand-ins, by name, for the code included after this header.
#define cudaFuncSetAttribute ::ladder_emulation::func_set_attribute
#define cudaGetDevice ::ladder_emulation::get_device
#define cudaDeviceGetAttribute ::ladder_emulation::device_get_attribute
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor \
  ::ladder_emulation::occupancy_max_active_blocks

/// Defines `ns::name`, the buffer a kernel in namespace `ns` declares as
/// `extern __shared__ float name[]`, with room for kMaxSharedBytes, and makes
/// it the dynamic shared memory of every launch. Use it before including the
/// kernel's header, at global scope.
#define LADDER_EMULATION_DYNAMIC_SHARED(ns, name)                              \
  namespace ns {                                                               \
  alignas(16) float name[::ladder_emulation::kMaxSharedBytes / sizeof(float)]; \
  }                                                                            \
  static const bool ladder_emulation_dynamic_shared_registered_##name =        \
      ::ladder_emulation::register_dynamic_shared(ns::name, sizeof(ns::name))
