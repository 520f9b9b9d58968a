// paraplan-mangen: writes a man page (roff, man macros) from a program's --help text, at build
// time, so that the pages say what the programs say. Used by packaging/CMakeLists.txt:
//
//   paraplan-mangen --program PATH --name NAME --summary TEXT [--subcommands]
//                   [--files TEXT] [--see-also TEXT] --output FILE
//
// It runs `PATH --help` and `PATH --version`; with --subcommands it also runs `PATH help CMD`
// for every command the help lists under "Commands:" and writes each as a subsection of
// COMMANDS. The help's "Exit status" part (a heading "Exit status:" or "Exit status (NOTE):"
// and its items) becomes the page's EXIT STATUS section; a help without one is an error, and
// so is a SEE ALSO that names the page itself. The help layout it reads is QCommandLineParser's
// (and the probe's, which follows it): "Usage:" lines, headings ending in ':' at the left margin,
// items indented two spaces with their description after a gap of two or more spaces, continuation
// lines indented more.

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDate>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QSaveFile>

#include <cstdio>

namespace {

[[noreturn]] void fail(const QString& message)
{
    std::fprintf(stderr, "error: %s\n", qPrintable(message));
    std::exit(2);
}

QString runProgram(const QString& program, const QStringList& args)
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen"); // the GUI's --help needs no display
    process.setProcessEnvironment(env);
    process.start(program, args);
    if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit ||
        process.exitCode() != 0)
        fail(QString("'%1 %2' failed: %3")
                 .arg(program, args.join(' '), QString::fromUtf8(process.readAllStandardError())));
    return QString::fromUtf8(process.readAllStandardOutput());
}

// Text made safe for roff: backslashes, a leading dot or quote, and hyphens that start a word
// (options: "--help" must copy and paste as ASCII minus signs).
QString roff(const QString& text)
{
    QString out;
    for (int i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (c == '\\')
            out += "\\e";
        else if (c == '-' && (i == 0 || !text[i - 1].isLetterOrNumber()))
            out += "\\-";
        else
            out += c;
    }
    if (out.startsWith('.') || out.startsWith('\''))
        out.prepend("\\&");
    return out;
}

struct Rendered
{
    QStringList usage; ///< the "Usage:" lines, program path replaced by its name
    QString body;      ///< everything else, as roff
};

// One --help text as roff. `nested`: headings become bold paragraphs (inside a subsection)
// instead of subsections.
Rendered render(const QString& help, const QString& program, const QString& name, bool nested)
{
    static const QRegularExpression item("^  (\\S.*?)(?:\\s{2,}(\\S.*))?$");
    Rendered r;
    QStringList out;
    bool inItem = false;
    bool inUsage = false;
    bool paragraph = true;
    for (QString line : help.split('\n')) {
        line.replace(program, name);
        if (line.trimmed().isEmpty()) {
            inItem = inUsage = false;
            paragraph = true;
            continue;
        }
        if (line.startsWith("Usage: ")) {
            r.usage << line.mid(7).trimmed();
            inUsage = true;
            continue;
        }
        if (inUsage && line.startsWith("       ")) {
            r.usage << line.trimmed();
            continue;
        }
        inUsage = false;
        if (!line.startsWith(' ') && line.endsWith(':')) {
            out << (nested ? ".PP\n\\fB" + roff(line) + "\\fR" : ".SS \"" + roff(line) + "\"");
            inItem = false;
            paragraph = false;
            continue;
        }
        const QRegularExpressionMatch m = item.match(line);
        if (line.startsWith("   ") && inItem) {
            out << roff(line.trimmed());
        } else if (m.hasMatch()) {
            out << ".TP"
                << "\\fB" + roff(m.captured(1)) + "\\fR";
            if (!m.captured(2).isEmpty())
                out << roff(m.captured(2));
            inItem = true;
        } else {
            if (paragraph || inItem)
                out << ".PP";
            out << roff(line.trimmed());
            inItem = false;
        }
        paragraph = false;
    }
    r.body = out.join('\n');
    return r;
}

// The command names the overview lists under "Commands:" (the first word of each item).
QStringList commandNames(const QString& help)
{
    QStringList names;
    bool inCommands = false;
    static const QRegularExpression item("^  ([a-z][a-z0-9-]*)");
    for (const QString& line : help.split('\n')) {
        if (!line.startsWith(' ') && !line.trimmed().isEmpty())
            inCommands = line == "Commands:";
        else if (inCommands) {
            const QRegularExpressionMatch m = item.match(line);
            if (m.hasMatch())
                names << m.captured(1);
        }
    }
    return names;
}

struct ExitStatus
{
    QString help;  ///< the help without its "Exit status" part
    QString note;  ///< the heading's parenthesis, "every command"; may be empty
    QString items; ///< the part's items, as help text (the heading removed)
};

// Splits the "Exit status" part (its heading at the left margin, up to the next line at the
// left margin) off the help text. Fails when the help has none.
ExitStatus splitExitStatus(const QString& help, const QString& program)
{
    static const QRegularExpression heading("^Exit status(?: \\((.*)\\))?:$");
    ExitStatus e;
    QStringList rest;
    QStringList items;
    bool inside = false;
    bool found = false;
    for (const QString& line : help.split('\n')) {
        const bool margin = !line.isEmpty() && !line.startsWith(' ');
        const QRegularExpressionMatch m = heading.match(line);
        if (margin && m.hasMatch() && !found) {
            e.note = m.captured(1);
            inside = found = true;
            continue;
        }
        if (margin)
            inside = false;
        (inside ? items : rest) << line;
    }
    if (!found || items.join("").trimmed().isEmpty())
        fail("no 'Exit status:' part in '" + program + " --help' (the man page's EXIT STATUS)");
    e.help = rest.join('\n');
    e.items = items.join('\n');
    return e;
}

QString synopsis(const QStringList& usage)
{
    QStringList lines;
    for (const QString& u : usage) {
        const int space = u.indexOf(' ');
        lines << ".B " + roff(space < 0 ? u : u.left(space)) +
                     (space < 0 ? "" : "\n" + roff(u.mid(space + 1).split("  ").first()));
    }
    return lines.join("\n.br\n");
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addOptions({{"program", "The program to run.", "PATH"},
                       {"name", "Its installed name.", "NAME"},
                       {"summary", "One line for NAME.", "TEXT"},
                       {"subcommands", "Document each command of 'help'."},
                       {"files", "A FILES section.", "TEXT"},
                       {"see-also", "A SEE ALSO section.", "TEXT"},
                       {"output", "The man page to write.", "FILE"}});
    parser.process(app);
    for (const char* required : {"program", "name", "summary", "output"}) {
        if (!parser.isSet(required))
            fail(QString("--%1 is required").arg(required));
    }
    const QString program = parser.value("program");
    const QString name = parser.value("name");
    const QString help = runProgram(program, {"--help"});
    const QString version = runProgram(program, {"--version"}).trimmed();
    const QString release = version.section(' ', 1, 1);
    const ExitStatus exitStatus = splitExitStatus(help, program);
    const Rendered top = render(exitStatus.help, program, name, false);
    // SEE ALSO lists the other pages, never this one.
    if (parser.value("see-also").contains(name + "(1)"))
        fail("--see-also names the page itself, " + name + "(1)");

    QStringList page;
    // SOURCE_DATE_EPOCH (reproducible builds) fixes the date when it is set.
    const QByteArray epoch = qgetenv("SOURCE_DATE_EPOCH");
    const QDate date = epoch.isEmpty() ? QDate::currentDate()
                                       : QDateTime::fromSecsSinceEpoch(epoch.toLongLong()).date();
    page << QString(".TH %1 1 \"%2\" \"Paraplan %3\" \"Paraplan manual\"")
                .arg(name.toUpper(), date.toString(Qt::ISODate), release);
    page << ".SH NAME" << roff(name) + " \\- " + roff(parser.value("summary"));
    page << ".SH SYNOPSIS" << synopsis(top.usage);
    page << ".SH DESCRIPTION" << top.body;
    if (parser.isSet("subcommands")) {
        const QStringList commands = commandNames(help);
        if (commands.isEmpty())
            fail("no 'Commands:' section in " + program + " --help");
        page << ".SH COMMANDS";
        for (const QString& command : commands) {
            const Rendered sub =
                render(runProgram(program, {"help", command}), program, name, true);
            page << ".SS \"" + roff(command) + "\"";
            for (const QString& u : sub.usage)
                page << ".PP"
                     << "\\fB" + roff(u) + "\\fR";
            page << sub.body;
        }
    }
    page << ".SH EXIT STATUS";
    if (!exitStatus.note.isEmpty())
        page << ".PP" << roff(exitStatus.note.left(1).toUpper() + exitStatus.note.mid(1) + ".");
    page << render(exitStatus.items, program, name, false).body;
    if (parser.isSet("files"))
        page << ".SH FILES" << roff(parser.value("files"));
    if (parser.isSet("see-also"))
        // Not hyphenated: the path copies as it is written.
        page << ".SH SEE ALSO"
             << ".nh" << roff(parser.value("see-also")) << ".hy";
    page << ".SH VERSION" << roff(version);

    QSaveFile file(parser.value("output"));
    if (!file.open(QIODevice::WriteOnly) || file.write((page.join('\n') + "\n").toUtf8()) < 0 ||
        !file.commit())
        fail("cannot write " + parser.value("output") + ": " + file.errorString());
    return 0;
}
