#include "commandline.h"

#include "units.h"

#include <QCommandLineParser>
#include <QStringList>

#include <cmath>
#include <optional>

namespace paraplan::cli {
namespace {

QString bareName(const char* name)
{
    QString bare = QString::fromUtf8(name);
    while (bare.startsWith('-'))
        bare.remove(0, 1);
    return bare;
}

// As users type it: "-o" for a one-letter name, "--op" otherwise (QCommandLineParser's
// convention in its help).
std::string dashedName(const QString& name)
{
    return (name.size() == 1 ? "-" : "--") + name.toStdString();
}

QCommandLineOption helpOption()
{
    return QCommandLineOption({"h", "help"}, "Show this help: usage, options and arguments.");
}

void declare(QCommandLineParser& parser, const Command& command,
             const std::vector<QCommandLineOption>& options)
{
    // "-foo" is one unknown option, not -f -o -o.
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.setApplicationDescription(QString::fromUtf8(command.summary));
    parser.addOption(helpOption());
    for (const QCommandLineOption& option : options)
        parser.addOption(option);
    const Positional& p = command.positional;
    if (p.name)
        parser.addPositionalArgument(QString::fromUtf8(p.name), QString::fromUtf8(p.description),
                                     QString::fromStdString(p.syntax()));
}

// The option name as parsed from one argument ("--op=x" -> "op", "-o" -> "o"), or nothing
// when the argument is not an option.
std::optional<QString> optionName(const std::string& arg, std::string* key = nullptr)
{
    if (arg.size() < 2 || arg[0] != '-' || arg == "--")
        return std::nullopt;
    const std::string spelled = arg.substr(0, arg.find('='));
    if (key)
        *key = spelled;
    return QString::fromStdString(spelled.substr(spelled.rfind("--", 0) == 0 ? 2 : 1));
}

// The arguments up to "--", after which QCommandLineParser reads no more options.
std::vector<std::string> optionPart(const std::vector<std::string>& args)
{
    std::vector<std::string> part;
    for (const std::string& arg : args) {
        if (arg == "--")
            break;
        part.push_back(arg);
    }
    return part;
}

// Why QCommandLineParser refused the command line, in paraplan-cli's words, naming the
// option as it was typed.
std::string parseProblem(const QCommandLineParser& parser, const Command& command,
                         const std::vector<std::string>& args,
                         const std::vector<QCommandLineOption>& options)
{
    const std::vector<std::string> part = optionPart(args);
    const QStringList unknown = parser.unknownOptionNames();
    if (!unknown.isEmpty()) {
        std::string spelled = dashedName(unknown.first());
        for (const std::string& arg : part) {
            std::string key;
            if (optionName(arg, &key) == unknown.first()) {
                spelled = key;
                break;
            }
        }
        return "unknown option '" + spelled + "' (see 'paraplan-cli " + command.name + " --help')";
    }
    auto takesValue = [&](const QString& name) -> std::optional<bool> {
        for (const QCommandLineOption& option : options) {
            if (option.names().contains(name))
                return !option.valueName().isEmpty();
        }
        return std::nullopt;
    };
    if (!part.empty() && part.size() == args.size()) {
        std::string key;
        const std::optional<QString> last = optionName(part.back(), &key);
        if (last && key == part.back() && takesValue(*last).value_or(false))
            return key + " needs a value";
    }
    for (const std::string& arg : part) {
        std::string key;
        const std::optional<QString> name = optionName(arg, &key);
        if (name && key != arg && !takesValue(*name).value_or(true))
            return key + " takes no value";
    }
    return parser.errorText().toStdString();
}

} // namespace

std::string Positional::syntax() const
{
    if (!name)
        return {};
    const std::string text = std::string(name) + (max < 0 ? "..." : "");
    return min > 0 ? text : "[" + text + "]";
}

QCommandLineOption valueOption(const char* name, const char* valueName, const QString& description)
{
    return QCommandLineOption(bareName(name), description, QString::fromUtf8(valueName));
}

QCommandLineOption flagOption(const char* name, const QString& description)
{
    return QCommandLineOption(bareName(name), description);
}

namespace {

// Arguments are bytes (a file name in Latin-1 is not UTF-8): through the parser as QStrings
// and back unchanged. Valid UTF-8 decodes as itself; every other byte b becomes the lone
// surrogate U+DC00 + b (Python's "surrogateescape") and turns back into b.
QString argToQString(const std::string& bytes)
{
    QString out;
    size_t i = 0;
    while (i < bytes.size()) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        const int len = c < 0x80         ? 1
                        : (c >> 5) == 6  ? 2
                        : (c >> 4) == 14 ? 3
                        : (c >> 3) == 30 ? 4
                                         : 0;
        bool valid = len > 0 && i + static_cast<size_t>(len) <= bytes.size();
        for (int k = 1; valid && k < len; ++k)
            valid = (static_cast<unsigned char>(bytes[i + k]) >> 6) == 2;
        const QString decoded = valid ? QString::fromUtf8(bytes.data() + i, len) : QString();
        if (valid && !decoded.contains(QChar::ReplacementCharacter)) {
            out += decoded;
            i += static_cast<size_t>(len);
        } else {
            out += QChar(static_cast<char16_t>(0xDC00 + c));
            ++i;
        }
    }
    return out;
}

std::string argToBytes(const QString& text)
{
    std::string out;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char16_t u = text[i].unicode();
        if (u >= 0xDC80 && u <= 0xDCFF &&
            (i == 0 || !QChar::isHighSurrogate(text[i - 1].unicode()))) {
            out += static_cast<char>(u - 0xDC00);
            continue;
        }
        const qsizetype n = QChar::isHighSurrogate(u) && i + 1 < text.size() ? 2 : 1;
        out += text.mid(i, n).toStdString();
        i += n - 1;
    }
    return out;
}

} // namespace

Args::Args(const Command& command, const std::vector<std::string>& args)
{
    const std::vector<QCommandLineOption> options = command.options();
    QCommandLineParser parser;
    declare(parser, command, options);
    QStringList list{"paraplan-cli"};
    for (const std::string& arg : args)
        list.append(argToQString(arg));
    const bool parsed = parser.parse(list);
    if (parser.isSet("help")) {
        m_help = true;
        return;
    }
    if (!parsed)
        throw UsageError(parseProblem(parser, command, args, options));
    for (const QCommandLineOption& option : options) {
        const QString name = option.names().constFirst();
        if (!parser.isSet(name))
            continue;
        const std::string key = dashedName(name);
        m_order.push_back(key);
        if (option.valueName().isEmpty()) {
            m_flags.insert(key);
            continue;
        }
        const QStringList values = parser.values(name);
        if (command.repeatable && key == command.repeatable) {
            for (const QString& value : values)
                m_lists[key].push_back(argToBytes(value));
        } else if (values.size() > 1) {
            throw UsageError(key + " given twice");
        }
        m_values[key] = argToBytes(values.constFirst());
    }
    const Positional& p = command.positional;
    // A file argument of "-" is standard input (a pipe or a redirected file).
    const std::string_view kind = p.name ? p.name : "";
    for (const QString& arg : parser.positionalArguments())
        m_positional.push_back(arg == "-" && (kind == "PLAN" || kind == "FILE")
                                   ? std::string("/dev/stdin")
                                   : argToBytes(arg));
    if (static_cast<int>(m_positional.size()) < p.min)
        throw UsageError(std::string(command.name) + " needs " + p.description + ": " +
                         usageLine(command));
    if (p.max >= 0 && static_cast<int>(m_positional.size()) > p.max)
        throw UsageError("unexpected argument '" + m_positional[static_cast<size_t>(p.max)] +
                         "' (see 'paraplan-cli " + command.name + " --help')");
}

std::vector<std::string> Args::given() const
{
    return m_order;
}

const std::vector<std::string>& Args::all(const std::string& key) const
{
    static const std::vector<std::string> none;
    auto it = m_lists.find(key);
    return it == m_lists.end() ? none : it->second;
}

std::string Args::text(const std::string& key) const
{
    auto it = m_values.find(key);
    if (it == m_values.end())
        throw UsageError(key + " is required");
    return it->second;
}

double Args::number(const std::string& key) const
{
    const std::optional<double> value = units::parseNumber(text(key));
    if (!value)
        throw UsageError(key + ": '" + text(key) + "' is not a number");
    return *value;
}

double Args::positive(const std::string& key) const
{
    const double value = number(key);
    if (!(value > 0))
        throw UsageError(key + " must be positive (got " + text(key) + ")");
    return value;
}

int Args::integer(const std::string& key, int min, int max) const
{
    const double value = number(key);
    if (value != std::floor(value) || value < min || value > max)
        throw UsageError(key + " must be a whole number from " + std::to_string(min) + " to " +
                         std::to_string(max) + " (got " + text(key) + ")");
    return static_cast<int>(value);
}

double Args::bytes(const std::string& key) const
{
    std::string error;
    const std::optional<double> value = units::parseBytes(text(key), &error);
    if (!value)
        throw UsageError(key + ": " + error);
    if (auto problem = limits::check(limits::kBytes, *value, key.c_str()))
        throw UsageError(*problem);
    return *value;
}

double Args::within(const std::string& key, const limits::Range& range) const
{
    const double value = number(key);
    if (auto problem = limits::check(range, value, key.c_str()))
        throw UsageError(*problem);
    return value;
}

std::string usageLine(const Command& command)
{
    const std::string syntax = command.positional.syntax();
    return std::string("paraplan-cli ") + command.name + " [options]" +
           (syntax.empty() ? "" : " " + syntax);
}

std::string commandHelp(const Command& command)
{
    QCommandLineParser parser;
    declare(parser, command, command.options());
    QString text = parser.helpText();
    // Qt's usage line names the executable it runs in (a test binary, in-process): name the
    // command instead.
    text.replace(0, text.indexOf('\n'), "Usage: " + QString::fromStdString(usageLine(command)));
    return text.toStdString();
}

} // namespace paraplan::cli
