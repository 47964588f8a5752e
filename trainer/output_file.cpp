#include "trainer/output_file.h"

#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "trainer/run_folder.h"
#include "util/file_io.h"

namespace oppidum::trainer {
namespace fs = std::filesystem;
namespace {

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

bool is_run_folder(const fs::path& dir) {
  return present(RunPaths{dir}.config()) || present(dir / "lock");
}

}  // namespace

void check_output_file(const std::string& path, const std::string& option) {
  const std::string where = option + " " + path;
  if (path.empty() || path.back() == '/')
    throw std::runtime_error(option + " \"" + path + "\": give a file's name");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    throw std::runtime_error(where + ": it is " + util::describe_file_type(st.st_mode) +
                             ", not a regular file; refusing to replace it");
  const fs::path given(path);
  std::error_code ec;
  const fs::path folder =
      fs::weakly_canonical(given.parent_path().empty() ? fs::path(".") : given.parent_path(), ec);
  if (ec) return;  // a folder that cannot be resolved is no run's; the write names the problem
  const fs::path file = folder / given.filename();
  const auto refuse = [&](const fs::path& run) {
    throw std::runtime_error(where + ": a file of the run folder " + run.string() +
                             "; refusing to overwrite it (write to another file)");
  };
  if (is_run_folder(folder)) {
    for (const fs::path& own : RunPaths{folder}.own())
      if (file == own) refuse(folder);
  }
  const fs::path above = folder.parent_path();
  if (is_run_folder(above)) {
    const RunPaths run{above};
    if (folder == run.checkpoints() || folder == run.games()) refuse(above);
  }
}

}  // namespace oppidum::trainer
