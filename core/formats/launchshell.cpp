// The shell reader behind the launch-script imports (launchshell.h). Built from the bash
// manual's rules for quoting, parameter expansion, arrays and word splitting
// (https://www.gnu.org/software/bash/manual/bash.html, "Shell Expansions" and "Arrays").
#include "launchshell.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace paraplan::shell {
namespace {

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
};

bool isName(const std::string& s)
{
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
        return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            return false;
    return true;
}

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

void appendTo(Field* f, const Field& piece)
{
    f->text += piece.text;
    if (piece.state > f->state) {
        f->state = piece.state;
        f->why = piece.why;
    }
    f->started = true;
}

struct Variable
{
    std::vector<Field> elements; ///< a scalar holds one
    bool array = false;
};
using Variables = std::map<std::string, Variable>;

/// The value of $NAME / ${NAME} / ${NAME:-word}.
Field scalarValue(const Part& p, const Variables& vars)
{
    Field f;
    f.started = true;
    const auto found = vars.find(p.text);
    // Not set in the script, with a plain default (LAYERS=${LAYERS:-32}): the default, as the
    // script runs without that variable in its environment.
    if (found == vars.end() && isName(p.text) && p.hasDefault &&
        p.fallback.find_first_of("$`\"'\\") == std::string::npos) {
        f.text = p.fallback;
        f.state = Field::Known;
        return f;
    }
    if (found == vars.end() || !isName(p.text)) {
        f.text = p.raw;
        f.state = Field::Unknown;
        if (std::isdigit(static_cast<unsigned char>(p.text[0])) || p.text == "@" || p.text == "*")
            f.why = "$" + p.text + " is an argument of the script";
        else if (!isName(p.text))
            f.why = "$" + p.text + " is set by the shell as the script runs";
        else
            f.why = p.text + " is not set in the script" +
                    (p.hasDefault ? " (its default applies only where the environment does not "
                                    "set it)"
                                  : "");
        return f;
    }
    if (!found->second.elements.empty())
        f = found->second.elements.front();
    if (p.hasDefault && f.state == Field::Known && f.text.empty() &&
        (p.defaultIfEmpty || found->second.elements.empty()))
        f.text = p.fallback;
    if (f.state != Field::Known)
        f.text = p.raw;
    f.started = true;
    return f;
}

/// Expands a word as the shell would: variables, arrays, and (split) word splitting of what
/// unquoted expansions give.
class Expander
{
public:
    explicit Expander(const Variables& v) : vars(v) {}

    std::vector<Field> expand(const Word& w, bool split)
    {
        fields.assign(1, Field());
        pending = false;
        for (const Part& p : w.parts) {
            if (p.kind == Part::Text) {
                add(Field{p.text, Field::Known, "", true});
            } else if (p.kind == Part::Unsupported) {
                add(Field{p.raw, Field::Refused,
                          p.text + " cannot be read (Paraplan runs nothing in the script)", true});
            } else if (p.kind == Part::Var) {
                const Field v = scalarValue(p, vars);
                p.quoted || !split || v.state != Field::Known ? add(v) : addSplit(v.text);
            } else {
                array(p, split);
            }
        }
        std::vector<Field> out;
        for (const Field& f : fields)
            if (f.started)
                out.push_back(f);
        return out;
    }

private:
    void array(const Part& p, bool split)
    {
        const auto found = vars.find(p.text);
        if (found == vars.end()) {
            add(Field{p.raw, Field::Refused,
                      "the array " + p.text + " is never defined in the script", true});
            return;
        }
        const std::vector<Field>& elements = found->second.elements;
        for (size_t k = 0; k < elements.size(); ++k) {
            Field e = elements[k];
            if (e.state != Field::Known && e.text.empty())
                e.text = p.raw;
            if (k > 0)
                pending = true;
            p.quoted || !split || e.state != Field::Known ? add(e) : addSplit(e.text);
        }
    }
    void add(const Field& piece)
    {
        if (pending && fields.back().started)
            fields.emplace_back();
        pending = false;
        appendTo(&fields.back(), piece);
    }
    void addSplit(const std::string& value)
    {
        for (char c : value) {
            if (c == ' ' || c == '\t' || c == '\n') {
                pending = true;
                continue;
            }
            add(Field{std::string(1, c), Field::Known, "", true});
        }
    }

    const Variables& vars;
    std::vector<Field> fields;
    bool pending = false;
};

/// NAME= or NAME+= at the start of a word: the name, or empty.
std::string assignedName(const Word& w, bool* append)
{
    if (w.parts.empty() || w.parts[0].kind != Part::Text || w.parts[0].quoted)
        return {};
    const std::string& t = w.parts[0].text;
    const size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0)
        return {};
    *append = t[eq - 1] == '+';
    const std::string name = t.substr(0, eq - (*append ? 1 : 0));
    return isName(name) ? name : std::string();
}

void assign(const Word& w, int depth, Variables* vars)
{
    bool append = false;
    const std::string name = assignedName(w, &append);
    Word value = w;
    value.parts[0].text = value.parts[0].text.substr(value.parts[0].text.find('=') + 1);
    Field f;
    f.started = true;
    for (const Field& piece : Expander(*vars).expand(value, false))
        appendTo(&f, piece);
    const std::string written = w.raw.substr(w.raw.find('=') + 1);
    if (f.state != Field::Known)
        f.why = name + " is set to '" + written + "' (" + f.why + ")";
    if (depth > 0)
        f = Field{written, Field::Unknown,
                  name + " is set inside an if, for, while or case block, which Paraplan does "
                         "not run",
                  true};
    Variable& v = (*vars)[name];
    if (append && !v.elements.empty() && v.elements[0].state == Field::Known && depth == 0)
        appendTo(&v.elements[0], f);
    else
        v.elements = {f};
    v.array = false;
}

void assignArray(const Command& c, int depth, Variables* vars)
{
    std::vector<Field> elements;
    Expander expander(*vars);
    for (const Word& w : c.words)
        for (const Field& f : expander.expand(w, true))
            elements.push_back(f);
    if (depth > 0)
        elements = {Field{"${" + c.array + "[@]}", Field::Unknown,
                          c.array + " is set inside an if, for, while or case block, which "
                                    "Paraplan does not run",
                          true}};
    Variable& v = (*vars)[c.array];
    if (!c.append || depth > 0)
        v.elements.clear();
    v.elements.insert(v.elements.end(), elements.begin(), elements.end());
    v.array = true;
}

/// Runs the script's assignments in order and returns its other commands, expanded with the
/// variables as they stand at each.
std::vector<std::vector<Field>> evaluate(const std::vector<Command>& commands)
{
    static const std::set<std::string> opens = {"if", "for", "while", "until", "case"};
    static const std::set<std::string> closes = {"fi", "done", "esac"};
    static const std::set<std::string> prefixes = {"then",   "do",      "else",     "elif",
                                                   "export", "declare", "readonly", "local"};
    Variables vars;
    int depth = 0;
    std::vector<std::vector<Field>> out;
    for (const Command& c : commands) {
        if (!c.array.empty()) {
            assignArray(c, depth, &vars);
            continue;
        }
        size_t first = 0;
        auto literal = [&](size_t k) {
            const Word& w = c.words[k];
            return w.parts.size() == 1 && w.parts[0].kind == Part::Text && !w.parts[0].quoted
                       ? w.parts[0].text
                       : std::string();
        };
        const std::string head = literal(0);
        depth += opens.count(head) ? 1 : closes.count(head) ? -1 : 0;
        depth = std::max(depth, 0);
        while (first < c.words.size() && prefixes.count(literal(first)))
            ++first;
        size_t cmd = first;
        bool append = false;
        while (cmd < c.words.size() && !assignedName(c.words[cmd], &append).empty())
            ++cmd;
        if (cmd == c.words.size()) {
            for (size_t k = first; k < cmd; ++k)
                assign(c.words[k], depth, &vars);
            continue;
        }
        std::vector<Field> expanded;
        Expander expander(vars);
        for (size_t k = cmd; k < c.words.size(); ++k)
            for (const Field& f : expander.expand(c.words[k], true))
                expanded.push_back(f);
        if (!expanded.empty())
            out.push_back(expanded);
    }
    return out;
}

} // namespace

bool readScript(const std::string& text, std::vector<std::vector<Field>>* commands,
                std::string* error)
{
    // A script saved with Windows line ends: a backslash before "\r\n" continues the line.
    std::string lf;
    lf.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i)
        if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n'))
            lf += text[i];
    std::vector<Command> parsed;
    if (!ShellReader(lf).read(&parsed, error))
        return false;
    *commands = evaluate(parsed);
    return true;
}

} // namespace paraplan::shell
