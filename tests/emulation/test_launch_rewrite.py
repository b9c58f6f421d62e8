"""Tests of launch_rewrite.py: the launches it rewrites, what it leaves alone,
and the launches it refuses.

    python3 -m unittest test_launch_rewrite      (from tests/emulation)
"""
import tempfile
import unittest
from pathlib import Path

from launch_rewrite import RewriteError, rewrite, rewrite_file

L = "::ladder_emulation::launch"


class Rewrite(unittest.TestCase):
    def test_four_arguments(self):
        self.assertEqual(
            rewrite("  k<<<grid, block, 0, stream>>>(g.M, g.N);\n"),
            f"  {L}(k, grid, block, 0, stream)(g.M, g.N);\n")

    def test_two_and_three_arguments(self):
        self.assertEqual(rewrite("k<<<g, b>>>(x);"), f"{L}(k, g, b)(x);")
        self.assertEqual(rewrite("k<<<g, b, 128>>>(x);"), f"{L}(k, g, b, 128)(x);")

    def test_template_kernel_and_qualified_name(self):
        self.assertEqual(
            rewrite("ns::sgemm<T, ALIGNED, (N > 2)>"
                    "<<<blocks, T::NUM_THREADS, T::SMEM_BYTES, s>>>(a);"),
            f"{L}(ns::sgemm<T, ALIGNED, (N > 2)>, blocks, T::NUM_THREADS, T::SMEM_BYTES, s)(a);")

    def test_nested_template_arguments(self):
        self.assertEqual(rewrite("f<Tiling<1, 2>, 3><<<g, b>>>(x);"),
                         f"{L}(f<Tiling<1, 2>, 3>, g, b)(x);")

    def test_configuration_with_calls_and_commas(self):
        self.assertEqual(
            rewrite("copy<<<grid_for(r, c), dim3(TILE, ROWS), 0, s>>>(r, c, in, out);"),
            f"{L}(copy, grid_for(r, c), dim3(TILE, ROWS), 0, s)(r, c, in, out);")

    def test_line_breaks_are_kept(self):
        source = ("  sgemm<T>\n      <<<grid, block, T::SMEM_BYTES, stream>>>(g.M, g.N,\n"
                  "                                               g.K);\n")
        result = rewrite(source)
        self.assertEqual(result.count("\n"), source.count("\n"))
        self.assertEqual(
            result,
            f"  {L}(sgemm<T>\n      , grid, block, T::SMEM_BYTES, stream)(g.M, g.N,\n"
            "                                               g.K);\n")

    def test_several_launches(self):
        self.assertEqual(rewrite("a<<<1, 2>>>(x);\nb<<<3, 4>>>(y);\n"),
                         f"{L}(a, 1, 2)(x);\n{L}(b, 3, 4)(y);\n")

    def test_everything_else_unchanged(self):
        source = ('#include <x>\nint a = b << 3 >> 1;  // k<<<g, b>>>(x) in a comment\n'
                  '/* k<<<g, b>>>(x) */ const char* s = "k<<<g, b>>>(x)"; int n = 1\'000;\n')
        self.assertEqual(rewrite(source), source)

    def test_refusals(self):
        for source, reason in [
            ("k<<<g>>>(x);", "1 launch-configuration arguments"),
            ("k<<<a, b, c, d, e>>>(x);", "5 launch-configuration arguments"),
            ("k<<<g, b>>>;", "no argument list"),
            ("k<<<g, b(>>>(x);", "no '>>>'"),
            ("  <<<g, b>>>(x);", "no kernel name"),
        ]:
            with self.subTest(source=source):
                with self.assertRaisesRegex(RewriteError, "line 1: .*" + reason):
                    rewrite(source)

    def test_file_names_its_source(self):
        with tempfile.TemporaryDirectory() as d:
            source, out = Path(d) / "kernel.cuh", Path(d) / "out" / "kernel.cuh"
            source.write_text("k<<<1, 32>>>(x);\n")
            rewrite_file(source, out)
            self.assertEqual(out.read_text(),
                             f'#line 1 "{source.resolve().as_posix()}"\n{L}(k, 1, 32)(x);\n')


class TheProjectsHeaders(unittest.TestCase):
    """Every launch in the project's headers is rewritten, and nothing else changes."""

    def test_headers(self):
        root = Path(__file__).resolve().parents[2]
        headers = sorted([*root.glob("chapters/*/kernel.cuh"),
                          *root.glob("chapters/*/exercise/*.cuh"),
                          *root.glob("code/include/ladder/*.cuh")])
        self.assertTrue(headers)
        for header in headers:
            with self.subTest(header=header.relative_to(root).as_posix()):
                source = header.read_text()
                result = rewrite(source)
                self.assertNotIn("<<<", result)
                self.assertEqual(result.count(L), source.count("<<<"))
                self.assertEqual(result.count("\n"), source.count("\n"))
                # Outside the launches, the text is the same.
                self.assertEqual(result.replace(L + "(", "").replace(" ", "").replace("\n", ""),
                                 source.replace("<<<", ",").replace(">>>", ")").replace(" ", "")
                                 .replace("\n", ""))


if __name__ == "__main__":
    unittest.main()
