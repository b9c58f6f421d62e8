// One configuration of a chapter's sweep: the chapter's own description,
// chapter<Config>(), handed to the shared runner, exactly as the chapter's
// kernel.cu hands chapter<Chosen>(). code/sweep.py compiles this file once
// per configuration, naming the chapter and the configuration on the command
// line:
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -I code/include \
//     -DLADDER_CHAPTER_HEADER='"chapters/12-final/kernel.cuh"' \
//     -DLADDER_CHAPTER_NAMESPACE=ch12 \
//     -DLADDER_CONFIG='ch12::Tiling<128, 256, 16, 64, 64, 2, 8, 8, 256, 1, 1>' \
//     code/sweep/config.cu -lcublas -o bin/one-configuration
#include LADDER_CHAPTER_HEADER

int main(int argc, char** argv) {
  return ladder::run_chapter(LADDER_CHAPTER_NAMESPACE::chapter<LADDER_CONFIG>(), argc, argv);
}
