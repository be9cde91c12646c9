// The compile cache's layout and its fast path. A built library lives under its build key
// (the preprocessed source, flags, toolchain: what nvcc compiled), beside the log of its
// build and a manifest of the files it included. The fast path finds it from the kernel's
// bytes alone (the pre-key), so a resent kernel is found without running nvcc at all; the
// manifest is what makes that safe: every file the build included that the pre-key does
// not cover is checked again, by content, before the library is handed back.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mgk::eval {

// The name every kernel is compiled under, in a folder that depends only on its bytes, so
// neither the key nor nvcc's messages carry the file's own name or folder.
inline constexpr const char* kStagedName = "kernel.cu";

// The files a preprocessed translation unit says it read (its `# N "file"` line markers),
// each once, in order; pseudo files (<built-in>, <command-line>) left out.
std::vector<std::string> included_files(const std::string& preprocessed);

// What a build included, as the fast path checks it: each file not covered by the
// toolchain's version, with its SHA-256; a file in the kernel's own folder by its path
// relative to that folder (so the same kernel in another folder, beside the same headers,
// is still found).
struct Manifest {
  struct File {
    std::string path;  // relative to the kernel's folder when `local`, else absolute
    bool local = false;
    std::string sha256;
  };
  std::vector<File> files;
  // Absolute paths of every other file included (toolkit, system): none of them may be
  // shadowed by a file in the kernel's folder, which is on the include path.
  std::vector<std::string> others;
  // How many folders up the kernel's #include names climb (`../common.h`: 1); when any, the
  // build holds only for the kernel in `fixed_dir`, its own folder, and the folders above it
  // are searched for shadows too.
  int climb = 0;
  std::string fixed_dir;
};

// The manifest of a build of the staged kernel `kernel_source` whose preprocessed units
// (host, device) included `included`, with the kernel's folder `kernel_dir`; `system_dirs`
// are the toolchain's (covered by its version, not hashed). nullopt where the fast path
// cannot be made safe: the kernel or a header of its own asks __has_include (a file that
// appears later would change the build without changing anything hashed).
std::optional<Manifest> make_manifest(const std::string& kernel_source, const std::vector<std::string>& included,
                                      const std::filesystem::path& kernel_dir,
                                      const std::vector<std::filesystem::path>& system_dirs);

// True when every file of the manifest still has its content, found from `kernel_dir`, and
// no file in `kernel_dir` could stand for one of the others.
bool manifest_holds(const Manifest& manifest, const std::filesystem::path& kernel_dir);

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path entry(const std::string& build_key) const;  // the folder of one build
  std::filesystem::path library(const std::string& build_key) const { return entry(build_key) / "kernel.so"; }
  // Where a kernel is staged: <root>/staged/<hash>/kernel.cu, written once (atomically); not
  // the src/ of earlier versions, which kept copies under their own names beside it.
  std::filesystem::path stage(const std::string& kernel_hash, const std::string& bytes) const;

  // The build key the fast path finds for `pre_key` with the kernel in `kernel_dir`, if its
  // library is there and its manifest holds.
  std::optional<std::string> find(const std::string& pre_key, const std::filesystem::path& kernel_dir) const;
  // Records a checked build: its log (kernel named kStagedName), and, with a manifest, the
  // fast path to it. The library itself is put in place by the caller.
  void record(const std::string& build_key, const std::string& log, const std::optional<std::string>& pre_key,
              const std::optional<Manifest>& manifest) const;
  // The fast path for another pre-key to a library already built (a resent kernel found by
  // its preprocessed source); the manifest must be the one its build recorded.
  void link(const std::string& pre_key, const std::string& build_key) const;
  std::string log(const std::string& build_key) const;  // "" when none was kept

 private:
  std::filesystem::path root_;
};

}  // namespace mgk::eval
