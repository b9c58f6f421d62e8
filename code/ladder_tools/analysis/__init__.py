"""Analysis of the built chapters, with no GPU: the build folder and its
binaries (binaries: --describe, cuobjdump, the CPU tools' JSON, cached),
which functions are the chapters' kernels (kernels), the instruction mix of
their K-loops (sass_mix, mix), occupancy and resources (occupancy,
resources), the CPU tools' maps (bankmap, fragmap, warpmap), chapter 13's
plans (tailplan), each random miss's count and cause (misses), and the
architectures the book names (archs). Standard library only.
"""
