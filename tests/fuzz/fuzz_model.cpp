// libFuzzer harness: a model described as JSON fields (the plan file's "model" object and the
// bundled presets: applyModelFields).

#include "fuzzinput.h"
#include "model.h"
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
    if (!reader.ok())
        return 0;
    // An accepted model reads back from its own JSON as the same model, and one that
    // validates has a finite parameter count.
    std::vector<std::string> againErrors;
    json::Reader again(&againErrors);
    ModelSpec copy;
    applyModelFields(modelToJson(model), "model", again, &copy);
    FUZZ_ASSERT(again.ok() && copy.layers == model.layers && copy.hidden == model.hidden &&
                    copy.heads == model.heads && copy.kv_heads == model.kv_heads &&
                    copy.ffn_hidden == model.ffn_hidden && copy.vocab == model.vocab &&
                    copy.experts == model.experts,
                "an accepted model reads back from its own JSON");
    if (validateModel(model).empty())
        FUZZ_ASSERT_FINITE(countParameters(model).total, "parameter count");
    return 0;
}
