// Reading a launch script the way bash would, without running anything: quoting, comments,
// line continuations, scalar assignments NAME=value, arrays NAME=( ... ) / NAME+=( ... ) (over
// several lines, with comments and quoted words) and their expansions $NAME, ${NAME},
// ${NAME:-default}, ${NAME[@]} (quoted or not, with word splitting). A value the script does
// not set itself (the environment, an argument, command substitution, arithmetic, an
// assignment inside if/for/while/case) stays unknown, with the reason.
#pragma once

#include <string>
#include <vector>

namespace paraplan::shell {

/// A word after expansion. Unknown: its value comes from outside the script (the environment,
/// an argument) or from something Paraplan does not run; Refused: it cannot be read at all.
struct Field
{
    enum State
    {
        Known,
        Unknown,
        Refused
    };
    std::string text; ///< the value; for a field that is not Known, the script's text
    State state = Known;
    std::string why;
    bool started = false;
};

/// The script's commands other than assignments, each expanded with the variables as the script
/// has set them by then. False with *error (naming the line) on an unterminated quote, ${, $(
/// or array.
bool readScript(const std::string& text, std::vector<std::vector<Field>>* commands,
                std::string* error);

} // namespace paraplan::shell
