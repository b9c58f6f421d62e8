# Build rules every chapter shares.

# ladder_add_chapter(<target> SOURCE <file> [VARIANT <suffix>]
#                    [SIZES <list of sizes for the GPU test>])
#
# Builds one chapter's kernel file into an executable, bin/<chapter folder>,
# keeps its SASS readable for the analysis (-lineinfo costs no speed), and
# registers its GPU correctness tests (label "gpu"), each the binary run with
# --check-only at the given sizes:
#   gpu.<slug>           alpha and beta both non-trivial;
#   gpu.<slug>.beta0     beta = 0, so C starts as NaN and must never be read;
#   gpu.<slug>.alpha0    alpha = 0: the result is beta * C;
#   gpu.<slug>.specials  NaN and infinities in A and B, which must reach the
#                        same elements of C as in cuBLAS's result.
# Without a GPU the binary exits with 77, which CTest reports as skipped. VARIANT builds
# a variant of the chapter instead, bin/<chapter folder>-<suffix>, from
# another file of the folder; the measure command measures it beside the
# chapter.
function(ladder_add_chapter target)
  cmake_parse_arguments(ARG "" "SOURCE;VARIANT" "SIZES" ${ARGN})
  add_executable(${target} ${ARG_SOURCE})
  target_link_libraries(${target} PRIVATE ladder_harness)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  get_filename_component(_slug ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  if(ARG_VARIANT)
    set(_slug ${_slug}-${ARG_VARIANT})
  endif()
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${_slug}
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  if(NOT ARG_SIZES)
    set(ARG_SIZES 256 512 1024)
  endif()
  set(_check ${target} --check-only --sizes ${ARG_SIZES})
  add_test(NAME gpu.${_slug} COMMAND ${_check} --alpha 0.75 --beta 0.5)
  add_test(NAME gpu.${_slug}.beta0 COMMAND ${_check} --alpha 1.25 --beta 0)
  add_test(NAME gpu.${_slug}.alpha0 COMMAND ${_check} --alpha 0 --beta 0.5)
  add_test(NAME gpu.${_slug}.specials COMMAND ${_check} --alpha 0.75 --beta 0.5 --special-values)
  set_tests_properties(gpu.${_slug} gpu.${_slug}.beta0 gpu.${_slug}.alpha0 gpu.${_slug}.specials
    PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endfunction()
