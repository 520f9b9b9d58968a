// The tests of a launch script's if blocks, read without running anything: [ ... ] and
// [[ ... ]] comparing values the script sets itself (launchshell.h: testValue).

#include "launchshell.h"

namespace paraplan::shell {

std::optional<bool> testValue(const std::vector<Field>& words)
{
    // "if" and a bracketed test of Known words only: [ A = B ], [[ A == B ]], [ A != B ],
    // [ -n A ], [ -z A ], with ! in front; anything else (an unknown value, a command's exit
    // status, -f FILE, && or || joining tests) is not known here.
    std::vector<std::string> w;
    for (const Field& f : words) {
        if (f.state != Field::Known)
            return std::nullopt;
        w.push_back(f.text);
    }
    if (w.size() < 3 || w.front() != "if")
        return std::nullopt;
    const bool doubled = w[1] == "[[";
    if (!(doubled ? w.back() == "]]" : w[1] == "[" && w.back() == "]"))
        return std::nullopt;
    std::vector<std::string> t(w.begin() + 2, w.end() - 1);
    bool negate = false;
    if (!t.empty() && t.front() == "!") {
        negate = true;
        t.erase(t.begin());
    }
    std::optional<bool> result;
    if (t.size() == 3 && (t[1] == "=" || t[1] == "==" || t[1] == "!=")) {
        // [[ A == B ]] with a pattern B (a * or ?) is a glob match: not read here.
        if (doubled && t[2].find_first_of("*?[") != std::string::npos)
            return std::nullopt;
        result = (t[0] == t[2]) == (t[1] != "!=");
    } else if (t.size() == 2 && (t[0] == "-n" || t[0] == "-z")) {
        result = t[1].empty() == (t[0] == "-z");
    } else if (t.size() == 1) {
        result = !t[0].empty();
    }
    if (!result)
        return std::nullopt;
    return negate ? !*result : *result;
}

} // namespace paraplan::shell
