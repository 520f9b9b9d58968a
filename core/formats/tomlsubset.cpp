#include "tomlsubset.h"
#include "cnumeric.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

namespace paraplan {

namespace {

/// A problem at a line; the parser skips to the next line and goes on.
struct TomlError
{
    int line;
    std::string message;
};

class TomlParser
{
public:
    explicit TomlParser(const std::string& text) : s(text) {}

    void run(TomlDocument* doc, std::vector<std::string>* errors);

private:
    const std::string& s;
    size_t pos = 0;
    int line = 1;
    std::string table;
    std::set<std::string> seen;

    bool atEnd() const { return pos >= s.size(); }
    char peek(size_t ahead = 0) const { return pos + ahead < s.size() ? s[pos + ahead] : '\0'; }
    [[noreturn]] void fail(const std::string& message) const { throw TomlError{line, message}; }
    void skipBlanks()
    {
        while (!atEnd() && (peek() == ' ' || peek() == '\t'))
            ++pos;
    }
    void skipComment()
    {
        if (peek() == '#')
            while (!atEnd() && peek() != '\n')
                ++pos;
    }
    /// Blanks, comments and newlines (inside arrays).
    void skipSpace()
    {
        for (;;) {
            skipBlanks();
            skipComment();
            if (peek() == '\r' && peek(1) == '\n')
                ++pos;
            if (peek() != '\n')
                return;
            ++pos;
            ++line;
        }
    }
    void skipToNextLine()
    {
        while (!atEnd() && peek() != '\n')
            ++pos;
    }
    void expectLineEnd()
    {
        skipBlanks();
        skipComment();
        if (peek() == '\r')
            ++pos;
        if (!atEnd() && peek() != '\n')
            fail("unexpected text after the value: '" + restOfLine() + "'");
    }
    std::string restOfLine() const
    {
        size_t end = s.find('\n', pos);
        std::string rest = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        if (rest.size() > 40)
            rest = rest.substr(0, 40) + "...";
        return rest;
    }

    std::string simpleKey();
    std::string dottedKey();
    std::string basicString();
    std::string literalString();
    TomlValue value(int depth);
    TomlValue scalar();
};

bool isBareKeyChar(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

std::string TomlParser::simpleKey()
{
    if (peek() == '"')
        return basicString();
    if (peek() == '\'')
        return literalString();
    const size_t start = pos;
    while (!atEnd() && isBareKeyChar(peek()))
        ++pos;
    if (pos == start)
        fail(peek() == '\0' || peek() == '\n'
                 ? std::string("a key is missing")
                 : "a key cannot start with '" + std::string(1, peek()) + "'");
    return s.substr(start, pos - start);
}

std::string TomlParser::dottedKey()
{
    std::string key = simpleKey();
    for (;;) {
        skipBlanks();
        if (peek() != '.')
            return key;
        ++pos;
        skipBlanks();
        key += "." + simpleKey();
    }
}

std::string TomlParser::basicString()
{
    if (s.compare(pos, 3, "\"\"\"") == 0)
        fail("multi-line strings (\"\"\") are not supported");
    ++pos;
    std::string out;
    for (;;) {
        if (atEnd() || peek() == '\n')
            fail("a string is not closed with \"");
        const char c = s[pos++];
        if (c == '"')
            return out;
        if (c != '\\') {
            out += c;
            continue;
        }
        const char e = s[pos++];
        switch (e) {
        case '"':
            out += '"';
            break;
        case '\\':
            out += '\\';
            break;
        case 'n':
            out += '\n';
            break;
        case 't':
            out += '\t';
            break;
        case 'r':
            out += '\r';
            break;
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        default:
            fail(std::string("the escape \\") + e + " is not supported");
        }
    }
}

std::string TomlParser::literalString()
{
    if (s.compare(pos, 3, "'''") == 0)
        fail("multi-line literal strings (''') are not supported");
    ++pos;
    const size_t end = s.find('\'', pos);
    const size_t eol = s.find('\n', pos);
    if (end == std::string::npos || (eol != std::string::npos && eol < end))
        fail("a string is not closed with '");
    std::string out = s.substr(pos, end - pos);
    pos = end + 1;
    return out;
}

TomlValue TomlParser::value(int depth)
{
    TomlValue v;
    const char c = peek();
    if (c == '"') {
        v.text = basicString();
        return v;
    }
    if (c == '\'') {
        v.text = literalString();
        return v;
    }
    if (c == '{')
        fail("inline tables ({...}) are not supported");
    if (c == '[') {
        if (depth > 8)
            fail("arrays nested deeper than 8 levels");
        ++pos;
        v.kind = TomlValue::Kind::Array;
        const int opened = line;
        for (;;) {
            skipSpace();
            if (peek() == ']') {
                ++pos;
                return v;
            }
            if (atEnd())
                throw TomlError{opened, "an array is not closed with ]"};
            v.items.push_back(value(depth + 1));
            skipSpace();
            if (atEnd())
                throw TomlError{opened, "an array is not closed with ]"};
            if (peek() == ',') {
                ++pos;
                continue;
            }
            if (peek() == ']') {
                ++pos;
                return v;
            }
            fail("expected , or ] in an array, found '" + restOfLine() + "'");
        }
    }
    return scalar();
}

TomlValue TomlParser::scalar()
{
    const size_t start = pos;
    while (!atEnd() && (isBareKeyChar(peek()) || peek() == '+' || peek() == '.' || peek() == ':'))
        ++pos;
    const std::string token = s.substr(start, pos - start);
    TomlValue v;
    if (token.empty())
        fail(atEnd() || peek() == '\n' ? std::string("a value is missing after =")
                                       : "unexpected '" + std::string(1, peek()) + "'");
    if (token == "true" || token == "false") {
        v.kind = TomlValue::Kind::Bool;
        v.boolean = token == "true";
        return v;
    }
    const std::string bare = token[0] == '+' || token[0] == '-' ? token.substr(1) : token;
    if (bare == "inf" || bare == "nan")
        fail("'" + token + "' is not a finite number");
    if (token.find(':') != std::string::npos ||
        (token.size() >= 10 && token[4] == '-' && token[7] == '-'))
        fail("dates and times are not supported ('" + token + "')");
    if (bare.empty() || !isdigit(static_cast<unsigned char>(bare[0])))
        fail("'" + token + "' is not a value (strings need quotes)");
    std::string digits;
    for (size_t i = 0; i < token.size(); ++i) {
        if (token[i] != '_')
            digits += token[i];
        else if (i == 0 || i + 1 == token.size() ||
                 !isdigit(static_cast<unsigned char>(token[i - 1])) ||
                 !isdigit(static_cast<unsigned char>(token[i + 1])))
            fail("'" + token + "' is not a number (an underscore must sit between digits)");
    }
    const bool isFloat = digits.find_first_of(".eE") != std::string::npos &&
                         digits.rfind("0x", 0) != 0 && digits.find("0x") != 1;
    errno = 0;
    char* end = nullptr;
    if (isFloat) {
        v.kind = TomlValue::Kind::Float;
        v.number = cStrtod(digits.c_str(), &end);
        if (*end != '\0' || errno == ERANGE || !std::isfinite(v.number) || digits.back() == '.' ||
            digits[bare.size() == token.size() ? 0 : 1] == '.')
            fail("'" + token + "' is not a number");
        return v;
    }
    v.kind = TomlValue::Kind::Int;
    int base = 10;
    std::string body = digits;
    if (bare.rfind("0x", 0) == 0 || bare.rfind("0o", 0) == 0 || bare.rfind("0b", 0) == 0) {
        if (bare.size() != token.size())
            fail("'" + token + "': a hexadecimal, octal or binary integer takes no sign");
        base = bare[1] == 'x' ? 16 : bare[1] == 'o' ? 8 : 2;
        body = digits.substr(2);
    }
    if (body.empty())
        fail("'" + token + "' is not a number");
    v.integer = std::strtoll(body.c_str(), &end, base);
    if (*end != '\0')
        fail("'" + token + "' is not a value (strings need quotes)");
    if (errno == ERANGE)
        fail("'" + token + "' is too large for a 64-bit integer");
    return v;
}

void TomlParser::run(TomlDocument* doc, std::vector<std::string>* errors)
{
    while (!atEnd()) {
        try {
            skipSpace();
            if (atEnd())
                break;
            const int at = line;
            if (peek() == '[') {
                if (peek(1) == '[')
                    fail("arrays of tables ([[...]]) are not supported");
                ++pos;
                skipBlanks();
                table = dottedKey();
                skipBlanks();
                if (peek() != ']')
                    fail("a table header is not closed with ]");
                ++pos;
                expectLineEnd();
                if (!seen.insert("[" + table + "]").second)
                    fail("the table [" + table + "] appears twice");
                continue;
            }
            std::string key = dottedKey();
            skipBlanks();
            if (peek() != '=')
                fail("expected = after the key '" + key + "'");
            ++pos;
            skipBlanks();
            TomlEntry entry;
            entry.value = value(0);
            entry.key = table.empty() ? key : table + "." + key;
            entry.line = at;
            expectLineEnd();
            if (!seen.insert(entry.key).second)
                fail("the key " + entry.key + " appears twice");
            doc->entries.push_back(std::move(entry));
        } catch (const TomlError& e) {
            errors->push_back("line " + std::to_string(e.line) + ": " + e.message);
            skipToNextLine();
        }
    }
}

} // namespace

const TomlEntry* TomlDocument::find(const std::string& key) const
{
    for (const TomlEntry& e : entries)
        if (e.key == key)
            return &e;
    return nullptr;
}

bool parseToml(const std::string& text, TomlDocument* doc, std::vector<std::string>* errors)
{
    const size_t before = errors->size();
    TomlParser(text).run(doc, errors);
    return errors->size() == before;
}

std::string tomlTypeName(const TomlValue& value)
{
    switch (value.kind) {
    case TomlValue::Kind::String:
        return "str";
    case TomlValue::Kind::Int:
        return "int";
    case TomlValue::Kind::Float:
        return "float";
    case TomlValue::Kind::Bool:
        return "bool";
    case TomlValue::Kind::Array:
        break;
    }
    if (value.items.empty())
        return "list";
    return "list[" + tomlTypeName(value.items.front()) + "]";
}

bool tomlValueHasType(const TomlValue& value, const std::string& type)
{
    if (type == "float")
        return value.kind == TomlValue::Kind::Float || value.kind == TomlValue::Kind::Int;
    if (type.rfind("list[", 0) == 0 && type.back() == ']') {
        if (value.kind != TomlValue::Kind::Array)
            return false;
        const std::string inner = type.substr(5, type.size() - 6);
        for (const TomlValue& item : value.items)
            if (!tomlValueHasType(item, inner))
                return false;
        return true;
    }
    return tomlTypeName(value) == type;
}

std::string tomlQuote(const std::string& text)
{
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            out += c;
        }
    }
    return out + "\"";
}

} // namespace paraplan
