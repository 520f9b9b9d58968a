#include "csv.h"

#include <QString>

#include <cmath>

namespace paraplan::csv {

std::string field(const std::string& text)
{
    if (text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string record(const std::vector<std::string>& fields)
{
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i)
        line += (i ? "," : "") + field(fields[i]);
    return line + "\r\n";
}

std::string number(double value, int digits)
{
    if (!std::isfinite(value))
        return {};
    return QString::number(value, 'g', digits).toStdString();
}

} // namespace paraplan::csv
