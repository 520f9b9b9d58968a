#pragma once

// CSV as RFC 4180 writes it: one table per file, a header row, CRLF after every record, and a
// field quoted (its quotes doubled) when it holds a comma, a quote, a CR or an LF. Every CSV
// that Paraplan writes goes through these.

#include <string>
#include <vector>

namespace paraplan::csv {

/// One field: as is, or in double quotes with each quote doubled when it holds , " CR or LF.
std::string field(const std::string& text);

/// One record: the fields quoted as needed, joined by commas, ended by CRLF.
std::string record(const std::vector<std::string>& fields);

/// A number as a CSV field: the shortest round-tripping form up to `digits` significant
/// digits ("0.5", "1e+12"); never "inf" or "nan" (those are written as an empty field).
std::string number(double value, int digits = 12);

} // namespace paraplan::csv
