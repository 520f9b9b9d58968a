#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace paraplan::cli {

/// Exit codes of paraplan-cli.
enum ExitCode
{
    kExitOk = 0,
    kExitUsage = 2, ///< bad arguments or files: one "error: ..." line on stderr
};

/// Runs one paraplan-cli command (`args` excludes the program name). Results go to `out`,
/// problems to `err`.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace paraplan::cli
