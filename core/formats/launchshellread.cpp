// Splitting a launch script into commands of words (launchshelldetail.h), by the bash
// manual's rules for quoting, comments, line continuations and $-expansions
// (https://www.gnu.org/software/bash/manual/bash.html, "Shell Syntax"). Nothing is evaluated.
#include "launchshelldetail.h"

#include <cctype>
#include <set>

namespace paraplan::shell::detail {
namespace {

/// Splits shell text into commands of words: quotes, comments, line continuations, $-expansions
/// and NAME=( ... ) array definitions over several lines. Nothing is evaluated here.
class ShellReader
{
public:
    explicit ShellReader(const std::string& text) : s(text) {}

    bool read(std::vector<Command>* commands, std::string* error);

private:
    void step();

    /// At '(' right after NAME= or NAME+= opening a command: starts the array's elements.
    bool arrayStart();

    void doubleQuoted();

    /// At '$': a variable, ${...}, $( ... ) or $(( ... )). Leaves i on the last character read.
    void dollar(bool quoted);

    void braced(const std::string& in, Part* p);

    void backtick();

    /// The index of the parenthesis closing the one at open (nested, quotes skipped).
    size_t closing(size_t open, char o, char c);

    void countLines(size_t from, size_t to);
    void text(const std::string& t, bool quoted);
    void unsupported(const std::string& raw, const std::string& what);
    void addPart(const Part& p);
    void endWord();
    void endCommand();
    void fail(const std::string& what) { error_ = "line " + std::to_string(line) + ": " + what; }

    std::string s;
    size_t i = 0;
    int line = 1;
    int arrayLine = 0;
    Word word;
    bool inWord = false;
    Command command;
    std::vector<Command>* out = nullptr;
    std::string error_;
};

bool ShellReader::read(std::vector<Command>* commands, std::string* error)
{
    out = commands;
    for (i = 0; i < s.size() && error_.empty(); ++i)
        step();
    if (error_.empty() && !command.array.empty())
        error_ = "line " + std::to_string(arrayLine) + ": the array " + command.array +
                 "=( is never closed";
    if (!error_.empty()) {
        *error = error_;
        return false;
    }
    endCommand();
    return true;
}

void ShellReader::step()
{
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size()) {
        if (s[i + 1] == '\n') {
            ++i;
            ++line;
            return;
        }
        text(std::string(1, s[++i]), false);
    } else if (c == '#' && !inWord) {
        while (i + 1 < s.size() && s[i + 1] != '\n')
            ++i;
    } else if (c == '\'') {
        const size_t end = s.find('\'', i + 1);
        if (end == std::string::npos)
            return fail("a single quote is never closed");
        countLines(i, end);
        text(s.substr(i + 1, end - i - 1), true);
        i = end;
    } else if (c == '"') {
        doubleQuoted();
    } else if (c == '$') {
        dollar(false);
    } else if (c == '`') {
        backtick();
    } else if (c == '(' && command.array.empty() && arrayStart()) {
        return;
    } else if (c == ')' && !command.array.empty()) {
        endWord();
        out->push_back(command);
        command = Command();
    } else if (c == '\n' || c == ';' || c == '|' || c == '&') {
        if (c == '\n')
            ++line;
        // || and && join the next command to this one (an if's tests); | and & end it.
        const bool joins =
            (c == '|' || c == '&') && i + 1 < s.size() && s[i + 1] == c && command.array.empty();
        if (joins) {
            endWord();
            command.joined = std::string(2, c);
            ++i;
        }
        if (command.array.empty())
            endCommand();
        else if (c != '\n')
            unsupported(std::string(1, c), "a command separator inside an array");
        else
            endWord();
    } else if (c == ' ' || c == '\t' || c == '\r') {
        endWord();
    } else if (c == '<' || c == '>') {
        unsupported(std::string(1, c), "a redirection");
    } else if (c == '(' || c == ')') {
        unsupported(std::string(1, c), "a subshell, function or array outside NAME=( ... )");
    } else {
        text(std::string(1, c), false);
    }
}

bool ShellReader::arrayStart()
{
    if (!inWord || word.parts.size() != 1 || word.parts[0].kind != Part::Text ||
        word.parts[0].quoted)
        return false;
    std::string name = word.parts[0].text;
    if (name.empty() || name.back() != '=')
        return false;
    name.pop_back();
    const bool append = !name.empty() && name.back() == '+';
    if (append)
        name.pop_back();
    if (!isName(name))
        return false;
    // Only keywords may come first: then A=( ... ), export A=( ... ).
    static const std::set<std::string> keywords = {"then",    "do",    "else",     "export",
                                                   "declare", "local", "readonly", "typeset"};
    for (const Word& w : command.words)
        if (w.parts.size() != 1 || w.parts[0].kind != Part::Text || w.parts[0].quoted ||
            !keywords.count(w.parts[0].text))
            return false;
    // A block keyword before it (then, else, do) is a command of its own: the block's
    // structure stays for the evaluation.
    for (const Word& w : command.words) {
        if (w.parts[0].text == "then" || w.parts[0].text == "else" || w.parts[0].text == "do") {
            Command keyword;
            keyword.words.push_back(w);
            out->push_back(keyword);
        }
    }
    command.words.clear();
    command.array = name;
    command.append = append;
    arrayLine = line;
    word = Word();
    inWord = false;
    return true;
}

void ShellReader::doubleQuoted()
{
    size_t j = i + 1;
    std::string pending;
    bool any = false;
    auto flush = [&] {
        if (!pending.empty() || !any)
            text(pending, true);
        pending.clear();
        any = true;
    };
    for (; j < s.size() && s[j] != '"'; ++j) {
        if (s[j] == '\\' && j + 1 < s.size() &&
            std::string("\"\\$`\n").find(s[j + 1]) != std::string::npos) {
            if (s[++j] != '\n')
                pending += s[j];
            else
                ++line;
            continue;
        }
        if (s[j] == '$' || s[j] == '`') {
            flush();
            i = j;
            s[j] == '$' ? dollar(true) : backtick();
            if (!error_.empty())
                return;
            j = i;
            continue;
        }
        if (s[j] == '\n')
            ++line;
        pending += s[j];
    }
    if (j >= s.size())
        return fail("a double quote is never closed");
    if (!pending.empty() || !any)
        text(pending, true);
    i = j;
}

void ShellReader::dollar(bool quoted)
{
    const size_t start = i;
    Part p;
    p.quoted = quoted;
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (next == '(') {
        const size_t end = closing(i + 1, '(', ')');
        if (end == std::string::npos)
            return fail("'$(' is never closed");
        p.kind = Part::Unsupported;
        p.text =
            i + 2 < s.size() && s[i + 2] == '(' ? "arithmetic expansion" : "command substitution";
        i = end;
    } else if (next == '{') {
        const size_t end = s.find('}', i + 2);
        if (end == std::string::npos)
            return fail("'${' is never closed");
        braced(s.substr(i + 2, end - i - 2), &p);
        i = end;
    } else if (std::isalpha(static_cast<unsigned char>(next)) || next == '_') {
        size_t end = i + 1;
        while (end < s.size() &&
               (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_'))
            ++end;
        p.kind = Part::Var;
        p.text = s.substr(i + 1, end - i - 1);
        i = end - 1;
    } else if (next != '\0' && (std::isdigit(static_cast<unsigned char>(next)) ||
                                std::string("@*#?$!-").find(next) != std::string::npos)) {
        p.kind = Part::Var;
        p.text = std::string(1, next);
        ++i;
    } else {
        return text("$", quoted);
    }
    p.raw = s.substr(start, i - start + 1);
    addPart(p);
}

void ShellReader::braced(const std::string& in, Part* p)
{
    size_t n = 0;
    while (n < in.size() && (std::isalnum(static_cast<unsigned char>(in[n])) || in[n] == '_'))
        ++n;
    if (n == 0 && !in.empty() && std::string("@*#?$!-").find(in[0]) != std::string::npos)
        n = 1;
    const std::string rest = in.substr(n);
    p->kind = Part::Var;
    p->text = in.substr(0, n);
    if (n == 0) {
        p->kind = Part::Unsupported;
        p->text = "the parameter expansion '${" + in + "}'";
    } else if (rest == "[@]" || rest == "[*]") {
        p->kind = Part::Array;
    } else if (rest.rfind(":-", 0) == 0 || rest.rfind("-", 0) == 0) {
        p->hasDefault = true;
        p->defaultIfEmpty = rest[0] == ':';
        p->fallback = rest.substr(p->defaultIfEmpty ? 2 : 1);
        if (p->fallback.find_first_of("$`\\") != std::string::npos) {
            p->kind = Part::Unsupported;
            p->text = "the parameter expansion '${" + in + "}'";
        }
        std::string plain; // a quoted default: its quotes removed
        for (char c : p->fallback)
            if (c != '"' && c != '\'')
                plain += c;
        p->fallback = plain;
    } else if (!rest.empty()) {
        p->kind = Part::Unsupported;
        p->text = "the parameter expansion '${" + in + "}'";
    }
}

void ShellReader::backtick()
{
    const size_t end = s.find('`', i + 1);
    if (end == std::string::npos)
        return fail("a backquote is never closed");
    countLines(i, end);
    Part p;
    p.kind = Part::Unsupported;
    p.text = "command substitution";
    p.raw = s.substr(i, end - i + 1);
    i = end;
    addPart(p);
}

size_t ShellReader::closing(size_t open, char o, char c)
{
    int depth = 0;
    for (size_t j = open; j < s.size(); ++j) {
        if (s[j] == '\'' || s[j] == '"') {
            const size_t end = s.find(s[j], j + 1);
            if (end == std::string::npos)
                return end;
            j = end;
        } else if (s[j] == o) {
            ++depth;
        } else if (s[j] == c && --depth == 0) {
            countLines(open, j);
            return j;
        }
    }
    return std::string::npos;
}

void ShellReader::countLines(size_t from, size_t to)
{
    for (size_t j = from; j < to; ++j)
        line += s[j] == '\n';
}

void ShellReader::text(const std::string& t, bool quoted)
{
    Part p;
    p.text = t;
    p.raw = t;
    p.quoted = quoted;
    addPart(p);
}

void ShellReader::unsupported(const std::string& raw, const std::string& what)
{
    Part p;
    p.kind = Part::Unsupported;
    p.text = what;
    p.raw = raw;
    addPart(p);
}

void ShellReader::addPart(const Part& p)
{
    if (p.kind == Part::Text && !word.parts.empty() && word.parts.back().kind == Part::Text &&
        word.parts.back().quoted == p.quoted) {
        word.parts.back().text += p.text;
        word.parts.back().raw += p.raw;
    } else {
        word.parts.push_back(p);
    }
    word.raw += p.quoted && p.kind == Part::Text ? "\"" + p.raw + "\"" : p.raw;
    inWord = true;
}

void ShellReader::endWord()
{
    if (inWord)
        command.words.push_back(word);
    word = Word();
    inWord = false;
}

void ShellReader::endCommand()
{
    endWord();
    if (!command.words.empty())
        out->push_back(command);
    command = Command();
}

} // namespace

bool parseCommands(const std::string& text, std::vector<Command>* commands, std::string* error)
{
    return ShellReader(text).read(commands, error);
}

} // namespace paraplan::shell::detail
