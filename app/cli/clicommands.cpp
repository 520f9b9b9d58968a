#include "clicommands.h"

#include "commands/common.h"
#include "commandtable.h"
#include "completion.h"
#include "paraplan_version.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>
#include <string_view>

namespace paraplan::cli {
namespace {

std::ostream* g_err = &std::cerr;

// Positional arguments named PLAN or FILE are files the command reads: one that is missing or
// unreadable is an I/O error (3), found before the command parses it.
void checkInputFiles(const Command& command, const Args& args)
{
    const std::string_view name = command.positional.name ? command.positional.name : "";
    if (name != "PLAN" && name != "FILE")
        return;
    for (const std::string& path : args.positional())
        requireReadable(path);
}

// Whatever the command wrote reached standard output (a full disk, /dev/full, a closed pipe
// show only when the buffer is flushed).
int checkOutput(int code, std::ostream& out, std::ostream& err)
{
    out.flush();
    if (out && unfiltered(out))
        return code;
    const auto* checked = dynamic_cast<const FdOutputBuffer*>(unfiltered(out).rdbuf());
    const int reason = checked ? checked->error() : 0;
    err << "error: cannot write to standard output: "
        << (reason ? std::strerror(reason) : "the write failed") << "\n";
    return kExitIo;
}

} // namespace

std::ostream& errorStream()
{
    return *g_err;
}

FdOutputBuffer::FdOutputBuffer(int fd) : m_fd(fd)
{
    setp(m_buffer.data(), m_buffer.data() + m_buffer.size());
}

FdOutputBuffer::~FdOutputBuffer()
{
    drain();
}

bool FdOutputBuffer::drain()
{
    const char* next = pbase();
    while (next < pptr() && m_error == 0) {
        const ssize_t written = ::write(m_fd, next, static_cast<size_t>(pptr() - next));
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            m_error = written < 0 ? errno : EIO;
        else
            next += written;
    }
    setp(m_buffer.data(), m_buffer.data() + m_buffer.size());
    return m_error == 0;
}

FdOutputBuffer::int_type FdOutputBuffer::overflow(int_type c)
{
    if (!drain())
        return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
        *pptr() = traits_type::to_char_type(c);
        pbump(1);
    }
    return traits_type::not_eof(c);
}

int FdOutputBuffer::sync()
{
    return drain() ? 0 : -1;
}

std::string exitStatusHelp()
{
    return "Exit status (the same for every command):\n"
           "  0  done: the plan fits, a layout fits, the sets are within --tolerance\n"
           "  1  done, and the answer is no: the plan does not fit in memory (evaluate, report,\n"
           "     walkthrough PLAN, cliffs, export, import-launch), no layout fits (search), a\n"
           "     calibration set is outside --tolerance (validate), an --answer that is not\n"
           "     right (practice)\n"
           "  2  bad input: usage, an option's value, a file that cannot be read as what it\n"
           "     should be, an invalid plan (one 'error:' line on stderr)\n"
           "  3  I/O error: an input file missing or unreadable, an output file or standard\n"
           "     output that cannot be written (one 'error:' line naming the file)\n";
}

namespace {

// A C0 control but tab, newline and carriage return, or DEL: written escaped.
bool isControl(unsigned char c)
{
    return (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f;
}

} // namespace

bool ControlEscapingBuffer::write(const char* s, std::streamsize n)
{
    return m_target.rdbuf()->sputn(s, n) == n || (m_target.setstate(std::ios::badbit), false);
}

bool ControlEscapingBuffer::put(unsigned char c)
{
    static const char* const kHex = "0123456789abcdef";
    if (m_lead) {
        m_lead = false;
        if (c >= 0x80 && c <= 0x9f) {
            const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
            return write(escaped, sizeof escaped);
        }
        if (!write("\xc2", 1))
            return false;
    }
    if (c == 0xc2) {
        m_lead = true;
        return true;
    }
    if (isControl(c)) {
        const char escaped[] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
        return write(escaped, sizeof escaped);
    }
    const char plain = static_cast<char>(c);
    return write(&plain, 1);
}

ControlEscapingBuffer::int_type ControlEscapingBuffer::overflow(int_type c)
{
    if (traits_type::eq_int_type(c, traits_type::eof()))
        return traits_type::not_eof(c);
    return put(static_cast<unsigned char>(c)) ? c : traits_type::eof();
}

std::streamsize ControlEscapingBuffer::xsputn(const char* s, std::streamsize n)
{
    // Runs of plain bytes go through in one write; only controls are taken one by one.
    std::streamsize done = 0;
    while (done < n) {
        std::streamsize run = 0;
        while (!m_lead && done + run < n) {
            const auto c = static_cast<unsigned char>(s[done + run]);
            if (isControl(c) || c == 0xc2)
                break;
            ++run;
        }
        if (run > 0 && !write(s + done, run))
            return done;
        done += run;
        if (done < n && !put(static_cast<unsigned char>(s[done++])))
            return done - 1;
    }
    return n;
}

int ControlEscapingBuffer::sync()
{
    if (m_lead) {
        m_lead = false;
        if (!write("\xc2", 1))
            return -1;
    }
    return m_target.rdbuf()->pubsync() == 0 ? 0 : (m_target.setstate(std::ios::badbit), -1);
}

std::ostream& unfiltered(std::ostream& out)
{
    auto* filter = dynamic_cast<ControlEscapingBuffer*>(out.rdbuf());
    return filter ? filter->target() : out;
}

namespace {

int runCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
    ControlEscapingBuffer outText(out);
    ControlEscapingBuffer errText(err);
    std::ostream filteredOut(&outText);
    std::ostream filteredErr(&errText);
    const int code = runCommand(args, filteredOut, filteredErr);
    filteredOut.flush();
    filteredErr.flush();
    g_err = &err;
    return code;
}

namespace {

int runCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
    g_err = &err;
    try {
        if (args.empty()) {
            // The usage line and the one error line, on stderr: a script sees why it failed.
            err << "Usage: paraplan-cli COMMAND [options] [arguments]\n";
            throw UsageError("no command given (see 'paraplan-cli help' for the commands)");
        }
        if (args[0] == "--help" || args[0] == "-h") {
            out << overviewHelp();
            return checkOutput(kExitOk, out, err);
        }
        if (args[0] == "--version") {
            if (args.size() > 1)
                throw UsageError("--version takes no arguments (got '" + args[1] + "')");
            out << "paraplan-cli " << PARAPLAN_VERSION << "\n";
            return checkOutput(kExitOk, out, err);
        }
        if (args[0] == "--completion") {
            // Hidden: the build writes the bash and zsh completion scripts with it.
            const std::string script = completionScript(args.size() == 2 ? args[1] : "");
            if (script.empty() || args.size() != 2)
                throw UsageError("--completion takes one shell: bash or zsh");
            out << script;
            return kExitOk;
        }
        const Command* command = findCommand(args[0]);
        if (!command)
            throw UsageError(
                (args[0].rfind("-", 0) == 0 ? "unknown option '" : "unknown command '") + args[0] +
                "' (see 'paraplan-cli help')");
        const Args parsed(*command, std::vector<std::string>(args.begin() + 1, args.end()));
        if (parsed.helpRequested()) {
            out << commandHelp(*command);
            return checkOutput(kExitOk, out, err);
        }
        checkInputFiles(*command, parsed);
        return checkOutput(command->run(parsed, out), out, err);
    } catch (const IoError& error) {
        err << "error: " << error.what() << "\n";
        return kExitIo;
    } catch (const std::exception& error) {
        err << "error: " << error.what() << "\n";
        return kExitUsage;
    }
}

} // namespace

bool commandNeedsWidgets(const std::string& name)
{
    const Command* command = findCommand(name);
    return command && command->needs_widgets;
}

} // namespace paraplan::cli
