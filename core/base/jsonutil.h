#pragma once

// Small helpers for reading the JSON data files strictly: unknown keys are reported,
// wrong types are named with their path. Internal to core.

#include "enumnames.h"
#include <QJsonArray>

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace paraplan::json {

std::string join(const std::string& path, const char* key);

class Reader
{
public:
    explicit Reader(std::vector<std::string>* errors) : m_errors(errors) {}

    void error(const std::string& path, const std::string& message);
    void checkKeys(const QJsonObject& object, const std::string& path,
                   std::initializer_list<const char*> allowed);

    bool number(const QJsonObject& object, const char* key, const std::string& path, double* out,
                bool required = false);
    bool integer(const QJsonObject& object, const char* key, const std::string& path, int* out,
                 bool required = false);
    bool string(const QJsonObject& object, const char* key, const std::string& path,
                std::string* out, bool required = false);
    bool boolean(const QJsonObject& object, const char* key, const std::string& path, bool* out);
    /// A string that must be one of `choices` (name, value); anything else is reported as
    /// "unknown WHAT 'x' (name, name, ...)".
    template <typename E>
    bool choice(const QJsonObject& object, const char* key, const std::string& path,
                const char* what, std::initializer_list<std::pair<const char*, E>> choices, E* out)
    {
        std::string text;
        if (!string(object, key, path, &text))
            return false;
        std::string names;
        for (const auto& [name, value] : choices) {
            if (text == name) {
                *out = value;
                return true;
            }
            names += (names.empty() ? "" : ", ") + std::string(name);
        }
        error(join(path, key), "unknown " + std::string(what) + " '" + text + "' (" + names + ")");
        return false;
    }

    /// The same, the choices from an enum's name table.
    template <typename E, std::size_t N>
    bool choice(const QJsonObject& object, const char* key, const std::string& path,
                const char* what, const EnumName<E> (&table)[N], E* out)
    {
        std::string text;
        if (!string(object, key, path, &text))
            return false;
        if (enumFromName(table, text, out))
            return true;
        error(join(path, key),
              "unknown " + std::string(what) + " '" + text + "' (" + enumChoices(table) + ")");
        return false;
    }

    bool ok() const { return m_errors->empty(); }

private:
    std::vector<std::string>* m_errors;
};

bool parseDocument(const std::string& text, QJsonObject* root, std::string* error);
/// Reads a whole text file of at most `maxBytes` (default 64 MiB): devices and directories
/// are refused, and reading stops at the limit whatever the file system reports.
bool readFile(const std::string& path, std::string* text, std::string* error,
              long long maxBytes = 64LL << 20);
/// Writes through QSaveFile: the old file stays intact until the new one is complete (a name
/// near the 255-byte limit through a short temporary in the same folder). Standard output or
/// error under any of their names, a terminal, /dev/null and a FIFO are written to directly;
/// a directory or any other special file is refused.
bool writeFileAtomically(const std::string& path, const std::string& text, std::string* error);

} // namespace paraplan::json
