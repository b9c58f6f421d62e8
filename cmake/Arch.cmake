# ladder_targets_arch(<arch> <out>): sets <out> to ON when the build targets
# the GPU that <arch> runs on. 90a (sm_90a's instructions, such as wgmma and
# setmaxnreg) runs only on compute capability 9.0, so any of 90, 90-real,
# 90a ... in CMAKE_CUDA_ARCHITECTURES counts. Included by the folders that
# build for sm_90a alone (chapters/16-wgmma, 17-3xtf32-wgmma, code/tools).
function(ladder_targets_arch arch out)
  string(REGEX MATCH "^[0-9]+" _number "${arch}")
  set(_found OFF)
  foreach(_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(_arch MATCHES "^${_number}([^0-9]|$)")
      set(_found ON)
    endif()
  endforeach()
  set(${out} ${_found} PARENT_SCOPE)
endfunction()
