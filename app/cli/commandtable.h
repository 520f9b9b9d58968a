#pragma once

#include "commandline.h"

#include <string>
#include <vector>

namespace paraplan::cli {

/// Every paraplan-cli command, in the order `paraplan-cli help` lists them.
const std::vector<Command>& commandTable();

/// The command named `name`, or nullptr.
const Command* findCommand(const std::string& name);

} // namespace paraplan::cli
