#pragma once

// What the torchtitan export and import share: the llama3 flavors and the pipeline split into
// module names.

#include "plan.h"

#include <string>
#include <vector>

namespace paraplan::titan {

/// A torchtitan llama3 flavor (torchtitan/models/llama3/__init__.py, llama3_configs) and the
/// bundled model preset of the same shape.
struct Flavor
{
    const char* flavor;
    const char* preset;
    const char* hf_assets; ///< the upstream train configs' hf_assets_path
    int layers, hidden, heads, kv_heads;
};
const std::vector<Flavor>& llama3Flavors();

/// The flavor whose shape is the model's, or null.
const Flavor* matchingFlavor(const ModelSpec& model);

/// A torchtitan mixture-of-experts model flavor (its model family's __init__.py at v0.2.2) and
/// the bundled preset of the same public model.
struct MoeFlavor
{
    const char* name;      ///< [model] name: torchtitan/models/<name>
    const char* flavor;    ///< [model] flavor
    const char* preset;    ///< the bundled model preset
    const char* hf_assets; ///< hf_assets_path
};
const std::vector<MoeFlavor>& moeFlavors();

/// The MoE flavor whose preset has the model's shape (layers, widths, heads, experts, routing,
/// dense layers, vocabulary), or null.
const MoeFlavor* matchingMoeFlavor(const ModelSpec& model);

/// Layers of each virtual pipeline stage, in schedule order (stage k runs on rank k % pp):
/// each rank's layers (stageLayerCounts) split over its `interleave` chunks, the first chunks
/// taking one more where it does not divide.
std::vector<int> virtualStageLayers(const ModelSpec& model, const ParallelLayout& layout);

/// torchtitan's module_fqns_per_model_part for those stages: tok_embeddings in the first,
/// norm and output in the last, layers.N in between.
std::vector<std::vector<std::string>> moduleFqns(const std::vector<int>& virtualLayers);

} // namespace paraplan::titan
