#pragma once

// The shapes of a plan's GEMMs and attention core, read with Paraplan's own plan reader
// (probeplan.cpp, plain C++ linked against the core) for `paraplan-probe --plan PLAN.json`.
// No Qt and no core types here: probe.cu and probecompute.cu include it.

#include <string>
#include <vector>

namespace probe {

struct GemmJob
{
    std::string name; ///< "grid" for the standard grid, else "qkv", "attn_proj", "mlp_up", ...
    long long m = 0;
    long long n = 0;
    long long k = 0;
    long long batch = 1;
};

struct AttentionJob
{
    long long batch_heads = 0;
    long long seq = 0; ///< queries and keys (the unfused path: seq x seq scores)
    long long head_dim = 0;
};

struct ProbePlanShapes
{
    std::string plan_name;
    std::vector<GemmJob> gemms;
    std::vector<AttentionJob> attention;
};

/// Loads the plan at `path` and lists its shapes (one micro-batch on one GPU, rounded to
/// whole elements). False with `error` set when the plan cannot be read.
bool loadPlanShapes(const std::string& path, ProbePlanShapes* shapes, std::string* error);

} // namespace probe
