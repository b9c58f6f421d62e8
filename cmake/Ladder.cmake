# Build rules every chapter shares.

# ladder_add_chapter(<target> SOURCE <file> [VARIANT <suffix>]
#                    [SIZES <list of sizes for the GPU test>])
#
# Builds one chapter's kernel file into an executable, bin/<chapter folder>,
# keeps its SASS readable for the analysis (-lineinfo costs no speed), and
# registers its GPU correctness test (label "gpu"): the binary run with
# --check-only at the given sizes, alpha and beta both non-trivial. Without a
# GPU the binary exits with 77, which CTest reports as skipped. VARIANT builds
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
  string(REPLACE ";" " " _sizes "${ARG_SIZES}")
  add_test(NAME gpu.${_slug}
    COMMAND ${target} --check-only --alpha 0.75 --beta 0.5 --sizes ${ARG_SIZES})
  set_tests_properties(gpu.${_slug} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endfunction()
