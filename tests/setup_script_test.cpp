// scripts/setup.sh fails, saying what and why, when it cannot install an npm package the default
// suite needs (onnxruntime-node, playwright-core) or this machine's node cannot load it, instead of
// warning and leaving those tests to skip; and it passes where both load.
//
// Each case runs a copy of setup.sh in a temporary folder that holds only what it reads (the two
// package.json and package-lock.json pairs), with fakes first on PATH: `dpkg-query` says every
// Debian package is installed (so apt-get never runs) and `npm` fails or installs nothing. The
// machine's own node reads the package files; the cases are skipped, saying so, where there is no
// node.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/process_util.h"

namespace oppidum {
namespace {
namespace fs = std::filesystem;

const fs::path kSource = OPPIDUM_SOURCE_DIR;

class SetupScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test_util::run_shell("node --version >/dev/null 2>&1").status != 0)
      GTEST_SKIP() << "node is not installed (scripts/setup.sh installs Debian's nodejs): the "
                      "script reads its package files with node";
    root_ = fs::path(::testing::TempDir()) /
            ("setup_script_test-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "scripts");
    fs::copy_file(kSource / "scripts" / "setup.sh", root_ / "scripts" / "setup.sh");
    for (const char* folder : {"scripts/onnx", "tests/web"}) {
      fs::create_directories(root_ / folder);
      for (const char* file : {"package.json", "package-lock.json"})
        fs::copy_file(kSource / folder / file, root_ / folder / file);
    }
    fs::create_directories(root_ / "fake-bin");
    fake("dpkg-query", "echo 'install ok installed'");
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }

  // A program NAME in the fake bin folder that runs the shell lines `body`.
  void fake(const std::string& name, const std::string& body) {
    const fs::path path = root_ / "fake-bin" / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
  }

  // Runs the copy of setup.sh; its standard output and error together.
  test_util::CommandResult run_setup() {
    return test_util::run_shell("PATH='" + (root_ / "fake-bin").string() + "':\"$PATH\" bash '" +
                                (root_ / "scripts" / "setup.sh").string() + "' 2>&1");
  }

  fs::path root_;
};

TEST_F(SetupScriptTest, FailsWhenNpmCannotInstall) {
  fake("npm", "[ \"$1\" = --version ] && { echo 9.2.0; exit 0; }\n"
              "echo 'npm ERR! network: no registry here' >&2; exit 1");
  const auto r = run_setup();
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("setup: error: npm could not install onnxruntime-node 1.30.0 into "
                       "scripts/onnx (for the ONNX export test; node v"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("npm ERR! network: no registry here"), std::string::npos) << r.out;
}

TEST_F(SetupScriptTest, FailsWhenNodeCannotLoadWhatNpmInstalled) {
  fake("npm", "exit 0");  // installs nothing
  const auto r = run_setup();
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("setup: error: node v"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot load onnxruntime-node 1.30.0 from scripts/onnx (for the ONNX "
                       "export test): "),
            std::string::npos)
      << r.out;
}

TEST_F(SetupScriptTest, PassesWhereBothPackagesLoad) {
  // The packages this checkout installed (scripts/setup.sh), lent to the copy.
  for (const char* folder : {"scripts/onnx", "tests/web"}) {
    const fs::path modules = kSource / folder / "node_modules";
    if (!fs::exists(modules))
      GTEST_SKIP() << modules.string() << " is missing: run scripts/setup.sh";
    fs::create_directory_symlink(modules, root_ / folder / "node_modules");
  }
  fake("npm", "echo 'npm must not run: everything is installed' >&2; exit 1");
  const auto r = run_setup();
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("setup: onnxruntime-node and playwright-core load under node v"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace oppidum
