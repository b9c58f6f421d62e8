# Programs that only a GPU can run, on a machine that has none (and, at the
# end, CPU programs built with nvcc that run no kernel: ladder_cpu_only).
#
# The differential fuzzers (tests/gpu), the cut-twice test (tests/cpp), the
# Hopper probe (code/tools) and the baseline (code, run by the measure command
# alone) do nothing without a GPU: the tests that run them exit with 77 and
# CTest reports them skipped. Compiling them in full costs a 2-core machine
# about two minutes, most of it in the optimizer and ptxas.
# So where configure finds no GPU, ladder_gpu_only(<target>) compiles the
# program as a check alone: the front end runs over every line (templates,
# static_assert, #error) and writes PTX for the virtual architecture without
# optimizing it (-Xcicc -O0); ptxas does not run, so the inline PTX (asm)
# is checked by the CMake build of the chapters alone. A guard linked in
# (code/tools/gpu_only_guard.cpp) makes the program say so in one line and
# exit with 77, so its test is still reported skipped, and the unoptimized
# PTX never reaches a GPU. The chapters' own programs, which the book runs
# for their --describe, are built in full everywhere.
#
# LADDER_GPU_FOUND (cached) is ON where nvidia-smi reports a GPU's compute
# capability when a build folder is first configured: the question the
# top-level CMakeLists.txt asks to pick the architecture, with the same
# nvidia-smi it found. Configure with -DLADDER_GPU_FOUND=ON to
# build these programs in full in a folder first configured without one.
include_guard(GLOBAL)

if(NOT DEFINED LADDER_GPU_FOUND)
  set(_ladder_gpu_found OFF)
  find_program(_ladder_nvidia_smi nvidia-smi)  # cached: the top-level's
  if(_ladder_nvidia_smi)
    execute_process(
      COMMAND ${_ladder_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE _ladder_gpu_cc RESULT_VARIABLE _ladder_gpu_rc ERROR_QUIET)
    if(_ladder_gpu_rc EQUAL 0 AND _ladder_gpu_cc MATCHES "^[0-9]+\\.[0-9]+")
      set(_ladder_gpu_found ON)
    endif()
  endif()
  set(LADDER_GPU_FOUND ${_ladder_gpu_found} CACHE BOOL
    "a GPU was found at configure time: GPU-only programs are built in full (OFF: compiled as a check)")
endif()
if(NOT LADDER_GPU_FOUND)
  message(STATUS "LADDER_GPU_FOUND is OFF: the GPU-only programs are compiled as a check, "
                 "not to run (cmake/GpuOnly.cmake)")
endif()

# ladder_gpu_only(<target>): without a GPU, <target> (an executable that only
# a GPU can run) is compiled as a check and exits with 77 (see above); with
# one, nothing changes.
function(ladder_gpu_only target)
  if(LADDER_GPU_FOUND)
    return()
  endif()
  # Each architecture the target is built for, as its virtual (PTX) form:
  # 90a-real becomes 90a-virtual, 90 becomes 90-virtual. A list that names
  # no number (all, all-major, native) is left as it is: built in full.
  get_target_property(_archs ${target} CUDA_ARCHITECTURES)
  if(NOT _archs)
    set(_archs ${CMAKE_CUDA_ARCHITECTURES})
  endif()
  set(_virtual)
  foreach(_arch IN LISTS _archs)
    if(NOT _arch MATCHES "^([0-9]+[af]?)(-real|-virtual)?$")
      return()
    endif()
    list(APPEND _virtual ${CMAKE_MATCH_1}-virtual)
  endforeach()
  list(REMOVE_DUPLICATES _virtual)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${_virtual}")
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:-Xcicc -O0>")
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/code/tools/gpu_only_guard.cpp)
endfunction()

# ladder_cpu_only(<target>): <target> is built with nvcc for the headers it
# includes but launches no kernel (the CPU tools in code/tools, the nvcc
# GoogleTest programs in tests/cpp). Its device code is compiled the way
# ladder_gpu_only compiles a GPU-only program without a GPU: as far as PTX,
# unoptimized, so the front end still checks every line and neither the
# optimizer nor ptxas runs (the chapters' own builds do that work). It is PTX
# for sm_80, the oldest architecture a chapter's headers need, whatever GPU
# the build targets. On 2 cores that cut the six CPU tools' compile from 51 s
# to 34 s of CPU time, their output the same byte for byte.
function(ladder_cpu_only target)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES 80-virtual)
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:-Xcicc -O0>")
endfunction()
