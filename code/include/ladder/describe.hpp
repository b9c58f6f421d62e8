// What a chapter binary says about itself with --describe: its variants, the
// constants of their tilings, the sizes they accept and their kernels'
// resources, as JSON. Nothing here launches a kernel; the GPU is asked only
// when one is present, and otherwise the resources are read from the
// binary's own cubin with cuobjdump.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "chapter.hpp"
#include "cuda_check.hpp"
#include "json.hpp"
#include "options.hpp"
#include "provenance.hpp"

namespace ladder {

/// A kernel's resources, per thread and per block, and where they were read.
struct KernelResources {
  int registers_per_thread = 0;
  int static_smem_bytes = 0;       ///< `__shared__` arrays, without the driver's reservation
  int local_bytes_per_thread = 0;  ///< local memory: spills and arrays the compiler could not place
  std::string from;  ///< "cudaFuncGetAttributes" or "cuobjdump"; empty when they are unknown
  std::string why;   ///< why they are unknown, when `from` is empty
};

/// The resources of `function` (a `__global__` function) as the current GPU
/// reports them. Needs a GPU.
inline KernelResources resources_from_gpu(const void* function) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, function));
  KernelResources r;
  r.registers_per_thread = attr.numRegs;
  r.static_smem_bytes = static_cast<int>(attr.sharedSizeBytes);
  r.local_bytes_per_thread = static_cast<int>(attr.localSizeBytes);
  r.from = "cudaFuncGetAttributes";
  return r;
}

/// Adds the three resource fields of `r` to the JSON object `j`, under the
/// names that results files and --describe share.
inline Json& set_resource_fields(Json& j, const KernelResources& r) {
  return j.set("registers_per_thread", r.registers_per_thread)
      .set("static_smem_bytes", r.static_smem_bytes)
      .set("local_bytes_per_thread", r.local_bytes_per_thread);
}

/// JSON's null (Json writes a number that is not finite as null).
inline Json json_null() { return Json::number(NAN); }

namespace detail {

/// The whole of file `path`, or an empty string when it cannot be read.
inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Everything a shell command prints on stdout, or an empty string.
inline std::string command_output(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  pclose(pipe);
  return out;
}

/// True when `path` names a file this process may execute.
inline bool is_executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

/// The name of the function symbol at `address` (an address as the ELF file
/// `image` counts them) in its full symbol table, or an empty string.
inline std::string symtab_function_at(const std::string& image, std::uint64_t address) {
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(image.data());
  if (image.size() < sizeof(Elf64_Ehdr) || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 ||
      header->e_shoff + std::uint64_t(header->e_shnum) * sizeof(Elf64_Shdr) > image.size()) {
    return {};
  }
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(image.data() + header->e_shoff);
  for (int s = 0; s < header->e_shnum; ++s) {
    const Elf64_Shdr& symtab = sections[s];
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= header->e_shnum) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    if (symtab.sh_offset + symtab.sh_size > image.size() ||
        strtab.sh_offset + strtab.sh_size > image.size()) {
      return {};
    }
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(image.data() + symtab.sh_offset);
    for (size_t i = 0; i < symtab.sh_size / sizeof(Elf64_Sym); ++i) {
      const Elf64_Sym& symbol = symbols[i];
      if (ELF64_ST_TYPE(symbol.st_info) == STT_FUNC && symbol.st_value == address &&
          symbol.st_name < strtab.sh_size) {
        return std::string(image.c_str() + strtab.sh_offset + symbol.st_name);
      }
    }
  }
  return {};
}

}  // namespace detail

/// The kernel's own mangled name, from the name of its host stub `stub`.
/// nvcc gives the stubs of kernel templates internal linkage, which GCC's
/// mangling marks with an "L" before the function's name
/// (_ZN4ch10L15sgemm_warptiled...); the kernel in the cubin has none
/// (_ZN4ch1015sgemm_warptiled...). The name's prefix of namespaces is
/// skipped, length by length, to find that mark.
inline std::string without_internal_linkage(std::string stub) {
  if (stub.rfind("_Z", 0) != 0) return stub;
  size_t at = stub.compare(0, 3, "_ZN") == 0 ? 3 : 2;
  while (at + 1 < stub.size()) {
    const bool digit_next = std::isdigit(static_cast<unsigned char>(stub[at + 1])) != 0;
    if (stub[at] == 'L' && digit_next) return stub.erase(at, 1);
    if (!std::isdigit(static_cast<unsigned char>(stub[at]))) break;
    char* end = nullptr;
    const unsigned long length = std::strtoul(stub.c_str() + at, &end, 10);
    at = static_cast<size_t>(end - stub.c_str()) + length;
  }
  return stub;
}

/// The mangled name of the host stub of `function`, a `__global__` function
/// of this executable (see without_internal_linkage()), or an empty string
/// when the executable has no symbol table (stripped). nvcc gives the stubs
/// internal linkage or hidden visibility, so dladdr(), which reads only
/// exported symbols, names one only where it was exported; otherwise the
/// executable's full symbol table (.symtab) is read.
inline std::string kernel_symbol(const void* function) {
  Dl_info info{};
  if (function == nullptr || dladdr(function, &info) == 0) return {};
  if (info.dli_sname != nullptr) return info.dli_sname;
  const std::string image = detail::read_whole_file("/proc/self/exe");
  if (image.size() < sizeof(Elf64_Ehdr)) return {};
  // A position-independent executable's symbols count from its load address.
  const bool relocated = reinterpret_cast<const Elf64_Ehdr*>(image.data())->e_type == ET_DYN;
  const std::uint64_t address = reinterpret_cast<std::uintptr_t>(function) -
                                (relocated ? reinterpret_cast<std::uintptr_t>(info.dli_fbase) : 0);
  return detail::symtab_function_at(image, address);
}

/// The cuobjdump to ask: $CUOBJDUMP, else the first on PATH, else the CUDA
/// toolkit's ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda); empty when there is none.
inline std::string find_cuobjdump() {
  std::vector<std::string> candidates;
  if (const char* given = std::getenv("CUOBJDUMP")) candidates.push_back(given);
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  for (size_t begin = 0, end; begin <= path.size(); begin = end + 1) {
    end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    if (end > begin) candidates.push_back(path.substr(begin, end - begin) + "/cuobjdump");
  }
  const char* const roots[] = {std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH"),
                               "/usr/local/cuda"};
  for (const char* root : roots) {
    if (root != nullptr) candidates.push_back(std::string(root) + "/bin/cuobjdump");
  }
  for (const std::string& candidate : candidates) {
    if (detail::is_executable(candidate)) return candidate;
  }
  return {};
}

/// The resources of kernel `mangled` in the text of `cuobjdump -res-usage`:
/// its first entry, whose lines read
///   arch = sm_90                                  (the cubin's header)
///    Function _ZN4ch0111sgemm_naiveEiiifPKfS1_fPf:
///     REG:32 STACK:0 SHARED:5120 LOCAL:0 ...
/// From sm_90 on, SHARED includes the 1 KiB that the driver reserves per
/// block once a kernel uses shared memory; it is taken off, so that the
/// number is what cudaFuncGetAttributes reports (as code/analysis/occupancy.py
/// does). `from` is empty when the kernel is not in the text.
inline KernelResources parse_res_usage(const std::string& text, const std::string& mangled) {
  KernelResources r;
  int arch = 0;
  bool in_function = false;
  for (size_t begin = 0, end; begin < text.size(); begin = end + 1) {
    end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    std::sscanf(line.c_str(), " arch = sm_%d", &arch);
    if (line.find("Function " + mangled + ":") != std::string::npos) {
      in_function = true;
    } else if (in_function && line.find("REG:") != std::string::npos) {
      const auto field = [&line](const char* name) {
        const size_t at = line.find(std::string(" ") + name + ":");
        return at == std::string::npos ? 0 : std::atoi(line.c_str() + at + std::strlen(name) + 2);
      };
      const int shared = field("SHARED");
      const bool reserved = arch / 10 >= 9 && shared >= 1024;
      r.registers_per_thread = std::atoi(line.c_str() + line.find("REG:") + 4);
      r.static_smem_bytes = shared - (reserved ? 1024 : 0);
      r.local_bytes_per_thread = field("LOCAL") + field("STACK");  // spills live in the stack
      r.from = "cuobjdump";
      return r;
    }
  }
  r.why = "cuobjdump -res-usage does not list " + mangled;
  return r;
}

/// The resources of kernel `mangled`, read from this executable's own cubin
/// by `cuobjdump -res-usage`; `why` says what was missing when they cannot be.
inline KernelResources resources_from_cuobjdump(const std::string& mangled) {
  KernelResources r;
  const std::string tool = find_cuobjdump();
  if (mangled.empty()) {
    r.why = "the executable has no symbol table to name its kernel (stripped?)";
  } else if (tool.empty()) {
    r.why = "no GPU, and no cuobjdump on PATH, in $CUOBJDUMP or in the CUDA toolkit";
  } else {
    // Not /proc/self/exe itself: in the shell that popen() starts, that is the shell.
    const std::string exe = "/proc/" + std::to_string(getpid()) + "/exe";
    r = parse_res_usage(detail::command_output("'" + tool + "' -res-usage " + exe + " 2>/dev/null"),
                        mangled);
  }
  return r;
}

/// True when a CUDA GPU can be used; prints nothing either way.
inline bool gpu_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

/// The "kernel" object of --describe for `k`: its mangled name, launch shape
/// and resources, from the GPU when `use_gpu`, otherwise from cuobjdump.
inline Json kernel_json(const KernelInfo& k, bool use_gpu) {
  const std::string mangled = without_internal_linkage(kernel_symbol(k.function));
  Json j = Json::object();
  j.set("name", mangled.empty() ? json_null() : Json::string(mangled))
      .set("threads_per_block", k.threads_per_block)
      .set("dynamic_smem_bytes", k.dynamic_smem_bytes);
  const KernelResources r =
      use_gpu ? resources_from_gpu(k.function) : resources_from_cuobjdump(mangled);
  if (r.from.empty()) return j.set("resources_from", json_null()).set("why", r.why);
  return set_resource_fields(j, r).set("resources_from", r.from);
}

/// The dimensions of a product, in the order M, N, K.
constexpr const char* kDimensionNames[3] = {"M", "N", "K"};

/// The side that --describe holds the other dimensions at while it probes one.
constexpr int kProbeSide = 4096;

/// Whether `accepts` takes the product whose dimension `dim` (0: M, 1: N,
/// 2: K) is `side` and whose other two are kProbeSide.
inline bool accepts_side(AcceptsFn accepts, int dim, int side) {
  int size[3] = {kProbeSide, kProbeSide, kProbeSide};
  size[dim] = side;
  return accepts(size[0], size[1], size[2]).empty();
}

/// What `accepts` asks of dimension `dim`, found by asking it: {"multiple_of":
/// d}, d being the smallest side from 1 to kProbeSide that it accepts with
/// the other dimensions at kProbeSide, checked at 2d and 3d too; or
/// "multiple_of": null and why, when no such d describes it.
inline Json dimension_rule_json(AcceptsFn accepts, int dim) {
  Json j = Json::object();
  for (int step = 1; step <= kProbeSide; ++step) {
    if (!accepts_side(accepts, dim, step)) continue;
    if (accepts_side(accepts, dim, 2 * step) && accepts_side(accepts, dim, 3 * step)) {
      return j.set("multiple_of", step);
    }
    return j.set("multiple_of", json_null())
        .set("why", "accepts " + std::to_string(step) + " but not both of " +
                        std::to_string(2 * step) + " and " + std::to_string(3 * step));
  }
  return j.set("multiple_of", json_null())
      .set("why", "accepts no side from 1 to " + std::to_string(kProbeSide));
}

/// The "accepts" object of --describe: each dimension's rule, probed from
/// `accepts` itself, and the most elements a matrix may hold.
inline Json accepts_json(AcceptsFn accepts) {
  Json j = Json::object();
  for (int dim = 0; dim < 3; ++dim) j.set(kDimensionNames[dim], dimension_rule_json(accepts, dim));
  return j.set("max_elements", static_cast<double>(kMaxMatrixElements));
}

/// The constants of a variant as one JSON object, name: value.
inline Json constants_json(const std::vector<Constant>& constants) {
  Json j = Json::object();
  for (const Constant& c : constants) j.set(c.name, static_cast<double>(c.value));
  return j;
}

/// Variant number `index` of `chapter` as --describe prints it.
inline Json variant_json(const Chapter& chapter, size_t index, bool use_gpu) {
  const Variant& v = chapter.variants[index];
  Json j = Json::object();
  return j.set("name", v.name)
      .set("slug", result_slug(chapter, index))
      .set("title", v.title)
      .set("arithmetic", v.arithmetic == Arithmetic::kTf32 ? "tf32" : "fp32")
      .set("constants", constants_json(v.constants))
      .set("kernel", kernel_json(v.kernel, use_gpu))
      .set("accepts", accepts_json(v.accepts))
      .set("workspace", v.workspace != nullptr);
}

/// The whole of --describe: the chapter, its two source files (repository-
/// relative: `program_file` is kernel.cu, chapter.header kernel.cuh) and
/// every variant. The resources come from the GPU when one is present.
inline Json describe_json(const Chapter& chapter, const std::string& program_file) {
  const bool use_gpu = gpu_present();
  Json sources = Json::array();
  sources.push(Json::string(repo_relative(program_file)))
      .push(Json::string(repo_relative(chapter.header)));
  Json variants = Json::array();
  for (size_t i = 0; i < chapter.variants.size(); ++i) {
    variants.push(variant_json(chapter, i, use_gpu));
  }
  Json j = Json::object();
  return j.set("schema", 1)
      .set("chapter", chapter.slug)
      .set("title", chapter.title)
      .set("sources", sources)
      .set("tensor_cores", chapter.tensor_cores)
      .set("variants", variants);
}

}  // namespace ladder
