// The shell reader behind the launch-script imports (launchshell.h). Built from the bash
// manual's rules for quoting, parameter expansion, arrays and word splitting
// (https://www.gnu.org/software/bash/manual/bash.html, "Shell Expansions" and "Arrays").
#include "launchshell.h"
#include "launchshelldetail.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace paraplan::shell {
namespace {

using namespace detail;

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
    // Not set in the script, with a plain default (LAYERS=${LAYERS:-32}, ${4:-"MOCK"}): the
    // default, as the script runs without that variable in its environment nor arguments.
    std::string fallback = p.fallback;
    if (fallback.size() >= 2 && fallback.front() == '"' && fallback.back() == '"')
        fallback = fallback.substr(1, fallback.size() - 2);
    const bool argument = !p.text.empty() && std::isdigit(static_cast<unsigned char>(p.text[0]));
    if (found == vars.end() && (isName(p.text) || argument) && p.hasDefault &&
        fallback.find_first_of("$`\"'\\") == std::string::npos) {
        f.text = fallback;
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
            if (p.quoted || !split)
                add(e);
            else if (e.state == Field::Known)
                addSplit(e.text);
            else
                addSplitPartly(e);
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

    // An element whose value is partly unknown ("--data-cache-path ${DIR}", quoted when the
    // array was set): split at its spaces as bash splits it; the words without an expansion
    // in them are known.
    void addSplitPartly(const Field& e)
    {
        size_t i = 0;
        while (i < e.text.size()) {
            size_t j = i;
            while (j < e.text.size() && e.text[j] != ' ' && e.text[j] != '\t')
                ++j;
            if (j > i) {
                const std::string word = e.text.substr(i, j - i);
                const bool unknown = word.find_first_of("$`") != std::string::npos;
                add(Field{word, unknown ? e.state : Field::Known, unknown ? e.why : "", true});
            }
            pending = true;
            i = j + 1;
        }
        pending = false;
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

// An open block: an if (its branches taken or not) or a loop / case (run as if once).
struct Frame
{
    bool isIf = false;
    bool outerActive = true; // the block is reached
    bool active = true;      // the current branch runs
    bool anyTaken = false;   // a branch before this one ran
};

/// Runs the script's assignments in order and returns its other commands, expanded with the
/// variables as they stand at each. An if block whose test testValue() reads takes its
/// branch; the i-th other one takes it when bit i of `choices` is set (its line into `blocks`).
std::vector<std::vector<Field>> evaluate(const std::vector<Command>& commands, unsigned choices,
                                         std::vector<std::string>* blocks)
{
    static const std::set<std::string> loops = {"for", "while", "until", "case"};
    static const std::set<std::string> prefixes = {"then",   "do",      "else",     "elif",
                                                   "export", "declare", "readonly", "local"};
    Variables vars;
    int depth = 0; // open loops and case blocks: their assignments stay unknown
    std::vector<Frame> frames;
    std::vector<std::vector<Field>> out;
    auto active = [&] { return frames.empty() || frames.back().active; };
    for (size_t index = 0; index < commands.size(); ++index) {
        const Command& c = commands[index];
        if (!c.array.empty()) {
            if (active())
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
        if (head == "if" || head == "elif") {
            const bool opens = head == "if" || frames.empty() || !frames.back().isIf;
            Frame f = opens ? Frame{true, active(), false, false} : frames.back();
            bool taken = false;
            // The test: this command and those || or && join to it, up to "then".
            size_t last = index;
            while (!commands[last].joined.empty() && last + 1 < commands.size())
                ++last;
            const size_t chain = index;
            index = last;
            if (f.outerActive && !f.anyTaken) {
                std::vector<Field> words;
                std::optional<bool> known;
                for (size_t k = chain; k <= last; ++k) {
                    std::vector<Field> part{Field{"if", Field::Known, "", true}};
                    Expander expander(vars);
                    for (size_t w = k == chain ? 1 : 0; w < commands[k].words.size(); ++w)
                        for (const Field& x : expander.expand(commands[k].words[w], true))
                            part.push_back(x);
                    const std::optional<bool> value = testValue(part);
                    const std::string& op = commands[k - (k > chain ? 1 : 0)].joined;
                    known = k == chain || !known || !value ? (k == chain ? value : std::nullopt)
                            : op == "&&"                   ? std::optional<bool>(*known && *value)
                                                           : std::optional<bool>(*known || *value);
                    if (k > chain)
                        words.push_back(Field{op, Field::Known, "", true});
                    words.insert(words.end(), part.begin() + 1, part.end());
                }
                words.insert(words.begin(), Field{"if", Field::Known, "", true});
                if (known) {
                    taken = *known;
                } else {
                    const size_t bit = blocks->size();
                    std::string line;
                    for (const Field& x : words)
                        line += (line.empty() ? "" : " ") + x.text;
                    blocks->push_back(head + line.substr(2));
                    taken = bit < kMaxUnknownBlocks && ((choices >> bit) & 1u);
                }
            }
            f.active = f.outerActive && !f.anyTaken && taken;
            f.anyTaken = f.anyTaken || f.active;
            if (opens)
                frames.push_back(f);
            else
                frames.back() = f;
            continue;
        }
        if (head == "else" && !frames.empty() && frames.back().isIf) {
            Frame& f = frames.back();
            f.active = f.outerActive && !f.anyTaken;
            f.anyTaken = true;
        } else if (head == "fi" && !frames.empty()) {
            frames.pop_back();
            continue;
        } else if (loops.count(head)) {
            frames.push_back(Frame{false, active(), active(), true});
            ++depth;
        } else if ((head == "done" || head == "esac") && !frames.empty()) {
            frames.pop_back();
            depth = std::max(depth - 1, 0);
            continue;
        }
        if (!active())
            continue;
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

bool readScriptVariants(const std::string& text,
                        std::vector<std::vector<std::vector<Field>>>* variants,
                        std::vector<std::string>* blocksOut, std::string* error)
{
    // A script saved with Windows line ends: a backslash before "\r\n" continues the line.
    std::string lf;
    lf.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i)
        if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n'))
            lf += text[i];
    std::vector<Command> parsed;
    if (!parseCommands(lf, &parsed, error))
        return false;
    std::vector<std::string> blocks;
    variants->assign(1, evaluate(parsed, 0, &blocks));
    const size_t unknown = std::min<size_t>(blocks.size(), kMaxUnknownBlocks);
    for (unsigned k = 1; k < (1u << unknown); ++k) {
        std::vector<std::string> again;
        variants->push_back(evaluate(parsed, k, &again));
    }
    *blocksOut = blocks;
    return true;
}

bool readScript(const std::string& text, std::vector<std::vector<Field>>* commands,
                std::string* error)
{
    std::vector<std::vector<std::vector<Field>>> variants;
    std::vector<std::string> blocks;
    if (!readScriptVariants(text, &variants, &blocks, error))
        return false;
    *commands = variants.front();
    return true;
}

} // namespace paraplan::shell
