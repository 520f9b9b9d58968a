// The shell reader's pieces that its two halves share (launchshellread.cpp splits text into
// commands of words, launchshell.cpp evaluates them); not a public API.
#pragma once

#include "launchshell.h"

#include <string>
#include <vector>

namespace paraplan::shell::detail {

/// One piece of a shell word: literal text, a variable ($NAME, ${NAME}, ${NAME:-default}), an
/// array expansion (${NAME[@]}) or syntax Paraplan does not evaluate.
struct Part
{
    enum Kind
    {
        Text,
        Var,
        Array,
        Unsupported
    };
    Kind kind = Text;
    std::string text; ///< Text: the characters; Var, Array: the name; Unsupported: what it is
    std::string raw;  ///< as written in the script
    bool quoted = false;
    bool hasDefault = false; ///< ${NAME-word} or ${NAME:-word}
    bool defaultIfEmpty = false;
    std::string fallback;
};

struct Word
{
    std::vector<Part> parts;
    std::string raw;
};

/// A simple command, or (array not empty) the array definition NAME=( ... ) / NAME+=( ... ).
struct Command
{
    std::vector<Word> words;
    std::string array;
    bool append = false;
    std::string joined; ///< "||" or "&&" when that operator ended it (the next one joins it)
};

inline bool isName(const std::string& s)
{
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
        return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            return false;
    return true;
}

/// Splits shell text into commands of words (ShellReader, launchshellread.cpp); false with
/// *error naming the line on an unterminated quote, ${, $( or array.
bool parseCommands(const std::string& text, std::vector<Command>* commands, std::string* error);

} // namespace paraplan::shell::detail
