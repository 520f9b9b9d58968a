#pragma once

#include <string>

namespace paraplan::cli {

/// A completion script for `shell` ("bash" or "zsh") written from the command table: the
/// commands, each command's options, the values of options whose values are an enum or a
/// preset list, and file completion for PLAN/FILE arguments and FILE-valued options. The
/// build writes them with the hidden option `paraplan-cli --completion SHELL`; empty for an
/// unknown shell.
std::string completionScript(const std::string& shell);

} // namespace paraplan::cli
