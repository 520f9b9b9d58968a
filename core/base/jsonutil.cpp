#include "jsonutil.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSaveFile>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

namespace paraplan::json {

std::string join(const std::string& path, const char* key)
{
    return path.empty() ? std::string(key) : path + "." + key;
}

void Reader::error(const std::string& path, const std::string& message)
{
    m_errors->push_back(path.empty() ? message : path + ": " + message);
}

void Reader::checkKeys(const QJsonObject& object, const std::string& path,
                       std::initializer_list<const char*> allowed)
{
    std::set<QString> known;
    for (const char* key : allowed)
        known.insert(QString::fromLatin1(key));
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!known.count(it.key()))
            error(join(path, it.key().toStdString().c_str()), "unknown key");
    }
}

bool Reader::number(const QJsonObject& object, const char* key, const std::string& path,
                    double* out, bool required)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isUndefined()) {
        if (required)
            error(join(path, key), "missing (a number is required)");
        return false;
    }
    if (!value.isDouble() || !std::isfinite(value.toDouble())) {
        error(join(path, key), "must be a number");
        return false;
    }
    *out = value.toDouble();
    return true;
}

bool Reader::integer(const QJsonObject& object, const char* key, const std::string& path, int* out,
                     bool required)
{
    double value = 0;
    if (!number(object, key, path, &value, required))
        return false;
    if (value != std::floor(value) || std::fabs(value) > 2e9) {
        error(join(path, key), "must be a whole number");
        return false;
    }
    *out = static_cast<int>(value);
    return true;
}

bool Reader::string(const QJsonObject& object, const char* key, const std::string& path,
                    std::string* out, bool required)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isUndefined()) {
        if (required)
            error(join(path, key), "missing (a string is required)");
        return false;
    }
    if (!value.isString()) {
        error(join(path, key), "must be a string");
        return false;
    }
    *out = value.toString().toStdString();
    return true;
}

bool Reader::boolean(const QJsonObject& object, const char* key, const std::string& path, bool* out)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (value.isUndefined())
        return false;
    if (!value.isBool()) {
        error(join(path, key), "must be true or false");
        return false;
    }
    *out = value.toBool();
    return true;
}

bool parseDocument(const std::string& text, QJsonObject* root, std::string* error)
{
    QJsonParseError parseError;
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray::fromStdString(text), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        // Report a line number: offsets mean little to someone editing a file.
        int line = 1;
        for (int i = 0; i < parseError.offset && i < static_cast<int>(text.size()); ++i)
            line += text[static_cast<size_t>(i)] == '\n';
        *error = "invalid JSON at line " + std::to_string(line) + ": " +
                 parseError.errorString().toStdString();
        return false;
    }
    if (!document.isObject()) {
        *error = "the top level must be a JSON object";
        return false;
    }
    *root = document.object();
    return true;
}

namespace {

// UTF-16 and UTF-32 by their byte-order mark, or without one by the zero bytes ASCII text
// has beside each character in them; null for anything else.
const char* wideEncoding(const QByteArray& b)
{
    auto at = [&](int i) { return i < b.size() ? static_cast<unsigned char>(b[i]) : 0x100; };
    if (at(0) == 0xFF && at(1) == 0xFE)
        return at(2) == 0 && at(3) == 0 ? "UTF-32LE (little-endian)" : "UTF-16LE (little-endian)";
    if (at(0) == 0 && at(1) == 0 && at(2) == 0xFE && at(3) == 0xFF)
        return "UTF-32BE (big-endian)";
    if (at(0) == 0xFE && at(1) == 0xFF)
        return "UTF-16BE (big-endian)";
    if (b.size() >= 8 && at(0) != 0 && at(1) == 0 && at(2) == 0 && at(3) == 0 && at(4) != 0)
        return "UTF-32LE (little-endian)";
    if (b.size() >= 8 && at(0) == 0 && at(1) == 0 && at(2) == 0 && at(3) != 0)
        return "UTF-32BE (big-endian)";
    if (b.size() >= 4 && at(0) != 0 && at(1) == 0 && at(2) != 0 && at(3) == 0)
        return "UTF-16LE (little-endian)";
    if (b.size() >= 4 && at(0) == 0 && at(1) != 0 && at(2) == 0 && at(3) != 0)
        return "UTF-16BE (big-endian)";
    return nullptr;
}

} // namespace

bool readFile(const std::string& path, std::string* text, std::string* error, long long maxBytes)
{
    if (path.empty()) {
        *error = "no file name given";
        return false;
    }
    // Devices and directories are refused by what they are, not by the size they report
    // (/dev/zero reports 0 and never ends); a FIFO is read, but only up to the limit.
    std::error_code code;
    const std::filesystem::file_status status = std::filesystem::status(path, code);
    if (!code && status.type() != std::filesystem::file_type::regular &&
        status.type() != std::filesystem::file_type::fifo) {
        *error = "'" + path + "' is " +
                 (status.type() == std::filesystem::file_type::directory ? "a directory"
                                                                         : "not a regular file") +
                 "; give a file";
        return false;
    }
    // Opened by its bytes (a Latin-1 name is no UTF-8 QString); a FIFO without waiting for a
    // writer (none: it reads as empty), then read blocking as any file.
    QFile file;
    const bool fifo = !code && status.type() == std::filesystem::file_type::fifo;
    errno = 0;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
    if (fd < 0 || (fifo && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) ||
        !file.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        const int why = errno;
        if (fd >= 0 && !file.isOpen())
            ::close(fd);
        *error = "cannot open '" + path + "': " + std::strerror(why ? why : EIO);
        return false;
    }
    const std::string limitText = std::to_string(maxBytes >> 20) + " MiB";
    if (file.size() > maxBytes) {
        *error = "'" + path + "' is larger than " + limitText + "; not a file Paraplan reads";
        return false;
    }
    // Read in pieces and stop one byte past the limit, whatever size() said.
    QByteArray bytes;
    constexpr qint64 kChunk = 1 << 20;
    while (true) {
        const qint64 want = std::min<qint64>(kChunk, maxBytes + 1 - bytes.size());
        if (want <= 0)
            break;
        const QByteArray chunk = file.read(want);
        if (chunk.isEmpty()) {
            if (file.error() != QFileDevice::NoError) {
                *error = "cannot read '" + path + "': " + file.errorString().toStdString();
                return false;
            }
            break;
        }
        bytes += chunk;
    }
    if (bytes.size() > maxBytes) {
        *error = "'" + path + "' is larger than " + limitText + "; not a file Paraplan reads";
        return false;
    }
    if (const char* encoding = wideEncoding(bytes)) {
        *error = "'" + path + "' is " + encoding +
                 " text; Paraplan reads UTF-8: save it as UTF-8 (iconv -f " +
                 std::string(encoding).substr(0, std::string(encoding).find(' ')) +
                 " -t UTF-8, or the editor's encoding setting)";
        return false;
    }
    // A UTF-8 byte-order mark (Windows editors write one) is no part of the text.
    if (bytes.startsWith("\xEF\xBB\xBF"))
        bytes.remove(0, 3);
    *text = bytes.toStdString();
    return true;
}

namespace {

// Writes all of `text` to `fd`; false with errno set on a failed or short write.
bool writeAll(int fd, const std::string& text)
{
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

// The process's own standard output or error under one of its names: written to the open
// descriptor (what the shell redirected, a file included), never renamed over.
int standardStream(const std::string& path)
{
    for (int fd : {1, 2}) {
        const std::string n = std::to_string(fd);
        if (path == (fd == 1 ? "/dev/stdout" : "/dev/stderr") || path == "/dev/fd/" + n ||
            path == "/proc/self/fd/" + n)
            return fd;
    }
    return -1;
}

bool writeDirectly(const std::string& path, int fd, const std::string& text, std::string* error)
{
    const bool own = fd < 0;
    errno = 0;
    if (own)
        fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && own) // a FIFO without a reader fails to open (ENXIO) instead of blocking
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const bool ok = fd >= 0 && writeAll(fd, text);
    const int osError = errno;
    if (own && fd >= 0)
        ::close(fd);
    if (!ok)
        *error = "cannot write '" + path + "': " +
                 (osError == ENXIO ? std::string("no process reads this FIFO")
                                   : std::string(std::strerror(osError ? osError : EIO)));
    return ok;
}

// Names near the 255-byte limit (QSaveFile's temporary, the name and ".XXXXXX", would pass
// it) and names that are not UTF-8 (a QString cannot hold them): a short temporary in the same
// folder, made and renamed by the name's bytes.
bool writeByRename(const std::string& path, const std::string& text, std::string* error)
{
    const std::filesystem::path target(path);
    const std::filesystem::path dir =
        target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::string temp = (dir / ".paraplan-XXXXXX").string();
    errno = 0;
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) {
        *error = "cannot write '" + path + "': " + std::strerror(errno);
        return false;
    }
    // The permissions of the file it replaces (mkstemp makes 0600), else the usual 0666 & umask.
    struct stat old = {};
    mode_t mode = 0;
    if (::stat(path.c_str(), &old) == 0) {
        mode = old.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    const bool ok = writeAll(fd, text) && ::fchmod(fd, mode) == 0 && ::fsync(fd) == 0;
    const int osError = errno;
    ::close(fd);
    if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
        const int why = ok ? errno : osError;
        ::unlink(temp.c_str());
        *error = "cannot write '" + path + "': " + std::strerror(why ? why : EIO);
        return false;
    }
    return true;
}

} // namespace

bool writeFileAtomically(const std::string& path, const std::string& text, std::string* error)
{
    // QSaveFile writes a temporary beside the target and renames it over the target only on
    // commit. Its writes are buffered: a full disk (ENOSPC) or a size limit (EFBIG) shows
    // only when the buffer is flushed, and commit() does not check that flush, so flush
    // here and give up (the temporary is removed, the old file untouched) on any error.
    // Qt reports a write that stopped part way as "Unknown error": the OS's reason is
    // errno, read straight after the failing call.
    if (path.empty()) {
        *error = "cannot write: no file name given";
        return false;
    }
    if (const int fd = standardStream(path); fd >= 0)
        return writeDirectly(path, fd, text, error);
    // Only a regular file (or a new one) is replaced by rename: a device (/dev/null, a
    // terminal) or a FIFO is written to as it is (renaming over it would destroy it; as root,
    // /dev/full); a directory, a socket or a block device is refused.
    std::error_code code;
    const std::filesystem::file_status target = std::filesystem::status(path, code);
    const auto type = target.type();
    if (!code &&
        (type == std::filesystem::file_type::character || type == std::filesystem::file_type::fifo))
        return writeDirectly(path, -1, text, error);
    if (!code && type != std::filesystem::file_type::regular &&
        type != std::filesystem::file_type::not_found) {
        *error = "cannot write '" + path + "': " +
                 (type == std::filesystem::file_type::directory
                      ? "it is a directory"
                      : "it is not a regular file, a terminal or a FIFO; give a file path");
        return false;
    }
    if (std::filesystem::path(path).filename().string().size() > 240 ||
        QString::fromStdString(path).toStdString() != path)
        return writeByRename(path, text, error);
    QSaveFile file(QString::fromStdString(path));
    auto fail = [&](int osError) {
        *error =
            "cannot write '" + path + "': " +
            (osError != 0 ? std::string(std::strerror(osError)) : file.errorString().toStdString());
        file.cancelWriting();
        return false;
    };
    errno = 0;
    if (!file.open(QIODevice::WriteOnly))
        return fail(errno);
    const QByteArray bytes = QByteArray::fromStdString(text);
    errno = 0;
    if (file.write(bytes) != bytes.size())
        return fail(errno);
    errno = 0;
    if (!file.flush() || file.error() != QFileDevice::NoError)
        return fail(errno);
    errno = 0;
    if (!file.commit()) {
        const int osError = errno;
        *error =
            "cannot write '" + path + "': " +
            (osError != 0 ? std::string(std::strerror(osError)) : file.errorString().toStdString());
        return false;
    }
    return true;
}

} // namespace paraplan::json
