#pragma once

// A reader for the subset of TOML (https://toml.io/en/v1.0.0) that torchtitan's train_config
// files use: [table] and [dotted.table] headers, bare, quoted and dotted keys, basic and
// literal strings, integers, floats, booleans, arrays of those (nested, over several lines),
// and comments. Anything else (inline tables, arrays of tables, multi-line strings, dates,
// inf and nan) is an error naming its line.

#include <string>
#include <vector>

namespace paraplan {

struct TomlValue
{
    enum class Kind
    {
        String,
        Int,
        Float,
        Bool,
        Array,
    };
    Kind kind = Kind::String;
    std::string text; ///< String
    long long integer = 0;
    double number = 0;
    bool boolean = false;
    std::vector<TomlValue> items; ///< Array
};

/// One key with its full dotted name ("parallelism.tensor_parallel_degree").
struct TomlEntry
{
    std::string key;
    TomlValue value;
    int line = 0;
};

struct TomlDocument
{
    std::vector<TomlEntry> entries; ///< in file order
    const TomlEntry* find(const std::string& key) const;
};

/// Parses `text`; false with one "line N: ..." message per problem in `errors`.
bool parseToml(const std::string& text, TomlDocument* doc, std::vector<std::string>* errors);

/// The pinned type names of tests/data/launch/*.keys: "str", "int", "float", "bool",
/// "list[str]", "list[list[str]]". A float key accepts an integer (Python's float fields do).
std::string tomlTypeName(const TomlValue& value);
bool tomlValueHasType(const TomlValue& value, const std::string& type);

/// TOML text for a string (quoted, escaped).
std::string tomlQuote(const std::string& text);

} // namespace paraplan
