# Build rules every chapter shares.

# ladder_add_chapter(<target> SOURCE <file> [VARIANTS <name> ...]
#                    [SIZES <list of sizes for the GPU test>] [MIN_ARCH <cc>])
#
# Builds one chapter's program into an executable, bin/<chapter folder>,
# keeps its SASS readable for the analysis (-lineinfo costs no speed), and
# registers its GPU correctness tests (label "gpu"), each the binary run with
# --check-only at the given sizes:
#   gpu.<slug>           alpha and beta both non-trivial;
#   gpu.<slug>.beta0     beta = 0, so C starts as NaN and must never be read;
#   gpu.<slug>.alpha0    alpha = 0: the result is beta * C;
#   gpu.<slug>.specials  NaN and infinities in A and B, which must reach the
#                        same elements of C as in cuBLAS's result.
# Without a GPU the binary exits with 77, which CTest reports as skipped.
# VARIANTS names the chapter's other variants, each run by the same binary
# with --variant <name> (the measure command measures them beside the
# chapter); each gets the same four tests, as gpu.<slug>-<name>... A CPU test,
# cpu.<slug>.describe, checks that the binary's --describe lists exactly
# these variants after its own, so that this list and the chapter's
# description cannot drift apart.
# MIN_ARCH (e.g. 80) skips the chapter, with a note, when the build targets
# an older GPU architecture than the chapter's instructions need.
function(ladder_add_chapter target)
  cmake_parse_arguments(ARG "" "SOURCE;MIN_ARCH" "VARIANTS;SIZES" ${ARGN})
  if(ARG_MIN_ARCH)
    foreach(_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX MATCH "^[0-9]+" _number "${_arch}")
      if(_number AND _number LESS ARG_MIN_ARCH)
        message(STATUS "${target}: skipped, it needs sm_${ARG_MIN_ARCH} or newer "
                       "and the build targets sm_${_arch}")
        return()
      endif()
    endforeach()
  endif()
  add_executable(${target} ${ARG_SOURCE})
  target_link_libraries(${target} PRIVATE ladder_harness)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  get_filename_component(_slug ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${_slug}
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  if(NOT ARG_SIZES)
    set(ARG_SIZES 256 512 1024)
  endif()
  ladder_add_gpu_tests(${_slug} ${target} --check-only --sizes ${ARG_SIZES})
  foreach(_variant IN LISTS ARG_VARIANTS)
    ladder_add_gpu_tests(${_slug}-${_variant} ${target} --variant ${_variant} --check-only
      --sizes ${ARG_SIZES})
  endforeach()
  add_test(NAME cpu.${_slug}.describe
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/python/describe_check.py
            $<TARGET_FILE:${target}> ${ARG_VARIANTS})
  set_tests_properties(cpu.${_slug}.describe PROPERTIES LABELS cpu)
endfunction()

# ladder_add_gpu_tests(<name> <command> ...): the four GPU tests of one
# chapter or variant, gpu.<name>, .beta0, .alpha0 and .specials (see
# ladder_add_chapter), each <command> with its alpha, beta and inputs.
function(ladder_add_gpu_tests name)
  set(_check ${ARGN})
  add_test(NAME gpu.${name} COMMAND ${_check} --alpha 0.75 --beta 0.5)
  add_test(NAME gpu.${name}.beta0 COMMAND ${_check} --alpha 1.25 --beta 0)
  add_test(NAME gpu.${name}.alpha0 COMMAND ${_check} --alpha 0 --beta 0.5)
  add_test(NAME gpu.${name}.specials COMMAND ${_check} --alpha 0.75 --beta 0.5 --special-values)
  set_tests_properties(gpu.${name} gpu.${name}.beta0 gpu.${name}.alpha0 gpu.${name}.specials
    PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endfunction()
