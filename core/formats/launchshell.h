// Reading a launch script the way bash would, without running anything: quoting, comments,
// line continuations, scalar assignments NAME=value, arrays NAME=( ... ) / NAME+=( ... ) (over
// several lines, with comments and quoted words) and their expansions $NAME, ${NAME},
// ${NAME:-default}, ${NAME[@]} (quoted or not, with word splitting), and if blocks: a test of
// values the script sets ([ A = B ], [[ A == B ]], -n, -z, joined by && and ||) picks its
// branch, any other is read both ways (readScriptVariants). A value the script does not set
// itself (the environment, an argument without a default, command substitution, arithmetic,
// an assignment inside for/while/case) stays unknown, with the reason.
#pragma once

#include <optional>
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

/// The script read once for each way its if blocks of unknown tests can go (a test of the
/// environment, of an argument, of a command): variant k takes the branch of the i-th such
/// block when bit i of k is set. A test of values the script sets itself (testValue) picks its
/// branch in every variant. `blocks` gets each unknown test's line as written (the first
/// kMaxUnknownBlocks; beyond them the branches are not taken).
constexpr int kMaxUnknownBlocks = 6;
bool readScriptVariants(const std::string& text,
                        std::vector<std::vector<std::vector<Field>>>* variants,
                        std::vector<std::string>* blocks, std::string* error);

/// The value of an if line's test (its expanded words, "if" first) when it compares values
/// the script knows: [ A = B ], [[ A == B ]], !=, -n, -z; none otherwise.
std::optional<bool> testValue(const std::vector<Field>& words);

} // namespace paraplan::shell
