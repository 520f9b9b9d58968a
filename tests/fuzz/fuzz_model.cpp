// libFuzzer harness: a model described as JSON fields (the plan file's "model" object and the
// bundled presets: applyModelFields).

#include "fuzzinput.h"
#include "modeljson.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    QJsonObject root;
    std::string error;
    if (!json::parseDocument(fuzz::text(data, size), &root, &error))
        return 0;
    std::vector<std::string> errors;
    json::Reader reader(&errors);
    ModelSpec model;
    applyModelFields(root, "model", reader, &model);
    if (reader.ok())
        modelToJson(model);
    return 0;
}
