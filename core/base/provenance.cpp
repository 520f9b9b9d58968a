#include "provenance.h"

namespace paraplan {

const char* originName(Origin origin)
{
    switch (origin) {
    case Origin::Preset:
        return "preset";
    case Origin::Formula:
        return "formula";
    case Origin::UserEntry:
        return "user entry";
    case Origin::Measurement:
        return "measurement";
    case Origin::Assumption:
        return "assumption";
    }
    return "unknown";
}

std::string describeSource(const Sourced& figure)
{
    std::string text = originName(figure.origin);
    if (!figure.source.empty())
        text += ": " + figure.source;
    return text;
}

} // namespace paraplan
