// The differential fuzzer of one chapter (ladder/fuzz.cuh), built once per
// chapter around its kernel header: LADDER_CHAPTER_HEADER names the header,
// LADDER_CHAPTER the function that describes it
// (ch01::chapter, say). It runs the chapter's own launchers, so a
// failure here is a failure of the code the chapter's binary runs.
#include LADDER_CHAPTER_HEADER

#include <ladder/fuzz.cuh>

int main(int argc, char** argv) { return ladder::fuzz::run(LADDER_CHAPTER(), argc, argv); }
