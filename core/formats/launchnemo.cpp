// A plan as a NeMo Megatron GPT YAML fragment: the trainer.* and model.* keys of NeMo 1.x's
// megatron_llama_config.yaml at the commit launch::kNemoRelease names (the keys the test
// tst_launch checks against tests/data/launch/nemo-fec8221.keys). Keys that config does not
// carry (context and expert parallelism, uneven stages) are warnings.
#include "launchconfigdetail.h"

#include <cmath>
#include <string>
#include <vector>

namespace paraplan {
namespace {

using launch::integerText;

std::string line(const char* key, const std::string& value)
{
    return "  " + std::string(key) + ": " + value + "\n";
}
std::string line(const char* key, long long value)
{
    return line(key, std::to_string(value));
}
const char* boolText(bool value)
{
    return value ? "True" : "False";
}

std::string trainerSection(const Plan& plan, std::vector<std::string>* warnings)
{
    const TrainingSettings& t = plan.training;
    const launch::LaunchShape shape = launch::launchShape(plan);
    std::string out = "trainer:\n";
    out += line("devices", shape.gpus_per_node);
    out += line("num_nodes", shape.nodes);
    const char* precision = t.dtype == Dtype::FP16   ? "16"
                            : t.dtype == Dtype::FP32 ? "32"
                            : t.dtype == Dtype::TF32 ? "32"
                                                     : "bf16";
    out += line("precision", precision);
    if (t.dtype == Dtype::TF32)
        warnings->push_back("dtype tf32 is written as precision 32");
    if (t.train_tokens > 0)
        out += line("max_steps",
                    integerText(std::ceil(t.train_tokens /
                                          (static_cast<double>(plan.parallel.global_batch) *
                                           std::max(1, t.seq_len)))));
    return out;
}

std::string modelSection(const Plan& plan, std::vector<std::string>* warnings)
{
    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    std::string out = "model:\n";
    out += line("mcore_gpt", boolText(true));
    out += line("micro_batch_size", p.micro_batch);
    out += line("global_batch_size", p.global_batch);
    out += line("tensor_model_parallel_size", p.tp);
    out += line("pipeline_model_parallel_size", p.pp);
    // NeMo builds the layers with Megatron Core, which splits them evenly over the pipeline
    // ranks and each rank's evenly over the virtual stages, or refuses to start.
    const bool evenRanks = p.pp <= 1 || m.layers % p.pp == 0;
    const bool evenVirtual = evenRanks && p.interleave > 1 && (m.layers / p.pp) % p.interleave == 0;
    out += line("virtual_pipeline_model_parallel_size",
                evenVirtual ? std::to_string(p.interleave) : "null");
    if (p.interleave > 1 && !evenVirtual)
        warnings->push_back("interleave " + std::to_string(p.interleave) +
                            " is not written (virtual_pipeline_model_parallel_size null, no "
                            "interleaving): Megatron Core needs each pipeline rank's layers to "
                            "divide by it, and the pinned config has no key for a layout");
    if (!evenRanks)
        warnings->push_back(std::to_string(m.layers) + " layers do not divide over pp " +
                            std::to_string(p.pp) +
                            ": Megatron Core refuses the even split the file asks for, and the "
                            "pinned config has no key for uneven stages");
    out += line("encoder_seq_length", plan.training.seq_len);
    // As the Megatron export: at least seq_len (the config's default is encoder_seq_length).
    out += line("max_position_embeddings", std::max(m.max_positions, plan.training.seq_len));
    if (m.max_positions > 0 && m.max_positions < plan.training.seq_len)
        warnings->push_back("seq_len " + std::to_string(plan.training.seq_len) +
                            " is longer than the model's " + std::to_string(m.max_positions) +
                            " positions: max_position_embeddings is written as seq_len");
    out += line("num_layers", m.layers);
    out += line("hidden_size", m.hidden);
    out += line("ffn_hidden_size", m.ffn_hidden);
    out += line("num_attention_heads", m.heads);
    out += line("num_query_groups", m.kv_heads > 0 ? m.kv_heads : m.heads);
    out += line("kv_channels", m.head_dim > 0 && m.head_dim * m.heads != m.hidden
                                   ? std::to_string(m.head_dim)
                                   : "null");
    const std::string dropout = m.dropout ? "0.1" : "0.0";
    out += line("hidden_dropout", dropout);
    out += line("attention_dropout", dropout);
    out += line("ffn_dropout", "0.0");
    // The plan counts norms with biases (LayerNorm) for models with biases, else without
    // (RMSNorm); the pinned config's default is rmsnorm.
    out += line("normalization", m.biases ? "layernorm" : "rmsnorm");
    out += line("bias", boolText(m.biases));
    out += line("activation", m.mlp == MlpKind::SwiGLU ? "fast-swiglu" : "gelu");
    out += line("position_embedding_type", m.learned_positions ? "learned_absolute" : "rope");
    out += line("share_embeddings_and_output_weights", boolText(m.tied_embeddings));
    out += line("sequence_parallel", boolText(p.sequence_parallel));
    if (p.recompute == Recompute::Selective) {
        out += line("activations_checkpoint_granularity", "selective");
    } else if (p.recompute == Recompute::Full) {
        out += line("activations_checkpoint_granularity", "full");
        out += line("activations_checkpoint_method", "uniform");
        out += line("activations_checkpoint_num_layers", 1);
    } else {
        out += line("activations_checkpoint_granularity", "null");
    }
    out += line("transformer_engine", boolText(true));
    out += line("fp8", boolText(plan.training.dtype == Dtype::FP8));
    if (plan.training.dtype == Dtype::FP8) {
        out += line("fp8_hybrid", boolText(true));
        // The NeMo 1.x YAML (megatron_llama_config.yaml at fec8221) has no recipe key: its FP8
        // is Transformer Engine's delayed scaling.
        const Fp8Recipe recipe = plan.training.fp8_recipe;
        if (recipe != Fp8Recipe::Auto && recipe != Fp8Recipe::Delayed)
            warnings->push_back(std::string("fp8_recipe ") + fp8RecipeName(recipe) +
                                ": this NeMo config has no recipe key and runs delayed scaling "
                                "(the Megatron-LM export writes --fp8-recipe)");
        if (plan.training.fp8_param_gather)
            warnings->push_back("fp8_param_gather: this NeMo config has no key for FP8 weights "
                                "and keeps them in bf16 (the Megatron-LM export writes "
                                "--fp8-param-gather)");
    }
    // ZeRO: NeMo's distributed optimizer is optim.name distributed_fused_adam (Apex's
    // DistributedFusedAdam, ZeRO-2: optimizer state and gradients sharded), which
    // MegatronBaseModel refuses ("Distributed optimizers require O2") without megatron_amp_O2.
    const bool adam = plan.training.optimizer == Optimizer::Adam;
    const bool distributed = p.zero >= 1 && adam && plan.training.dtype != Dtype::FP32 &&
                             plan.training.dtype != Dtype::TF32;
    if (distributed)
        out += line("megatron_amp_O2", boolText(true));
    out += "  optim:\n";
    out += "    name: " + std::string(distributed ? "distributed_fused_adam\n"
                                      : adam      ? "fused_adam\n"
                                                  : "sgd\n");
    warnings->push_back("the vocabulary (" + std::to_string(m.vocab) +
                        " tokens) comes from model.tokenizer, which the fragment leaves to you");
    return out;
}

void nemoWarnings(const Plan& plan, std::vector<std::string>* warnings)
{
    const ParallelLayout& p = plan.parallel;
    const auto missing = [&](bool when, const std::string& what) {
        if (when)
            warnings->push_back(what + " is not written: the pinned NeMo config has no key "
                                       "for it; set it in your NeMo version's config");
    };
    missing(p.cp > 1, "context parallelism (cp " + std::to_string(p.cp) + ")");
    missing(p.ep > 1, "expert parallelism (ep " + std::to_string(p.ep) + ")");
    missing(plan.model.isMoe(), "the mixture of experts (" + std::to_string(plan.model.experts) +
                                    " experts, top " +
                                    std::to_string(plan.model.experts_per_token) + ")");
    missing(plan.model.isMla(), "multi-head latent attention");
    if (p.zero >= 1) {
        const bool adam = plan.training.optimizer == Optimizer::Adam;
        const bool half = plan.training.dtype != Dtype::FP32 && plan.training.dtype != Dtype::TF32;
        const std::string z = "ZeRO-" + std::to_string(p.zero);
        if (!adam)
            warnings->push_back(z + " is not written: NeMo's distributed optimizer "
                                    "(distributed_fused_adam) is Adam, and the plan trains "
                                    "with SGD; the file replicates the optimizer state");
        else if (!half)
            warnings->push_back(z + " is not written: distributed_fused_adam needs "
                                    "megatron_amp_O2, a half-precision setting, and the plan "
                                    "trains in full precision (fp32 or tf32); the file "
                                    "replicates the optimizer state");
        else if (p.zero != 2)
            warnings->push_back(z +
                                " is written as optim.name distributed_fused_adam, which is "
                                "ZeRO-2: " +
                                (p.zero == 3
                                     ? std::string("optimizer state and gradients sharded, "
                                                   "parameters kept whole on every rank")
                                     : std::string("the gradients are sharded too, not only "
                                                   "the optimizer state")));
    }
    missing(p.first_stage_layers > 0 || p.last_stage_layers > 0 || !p.stage_layers.empty(),
            "uneven pipeline stages");
    missing(p.dp_overlap, "the overlapped gradient reduction");
    missing(tpOverlapActive(plan), "TP communication overlap");
    missing(p.dp_shard > 0, "dp_shard (HSDP)");
    missing(plan.model.isMoe() && p.expert_tp > 0, "expert_tp (expert tensor parallelism)");
    missing(p.ep_overlap != EpOverlap::None, "ep_overlap a2a (the EP all-to-all overlap)");
    missing(plan.model.isMoe() && plan.training.moe_dispatcher != MoeDispatcher::Auto,
            "the MoE token dispatcher");
    missing(plan.model.isMoe() && plan.training.moe_router_fusion, "moe_router_fusion");
    missing(plan.training.cuda_graphs != CudaGraphs::None, "the CUDA graphs (cuda_graphs)");
    using D = ParallelDim;
    missing(p.rank_order != std::array<D, 4>{D::TP, D::CP, D::DP, D::PP}, "the rank order");
    missing(plan.training.attention != AttentionKernel::Auto, "the attention kernel");
    missing(plan.training.train_tokens <= 0, "the training length (train_tokens not given)");
}

} // namespace

void exportNemo(const Plan& plan, LaunchConfig* out)
{
    LaunchConfig& config = *out;
    config.release = launch::kNemoRelease;
    const std::string& fileName = config.file_name;
    std::vector<std::string> warnings = config.warnings;
    const std::string trainer = trainerSection(plan, &warnings);
    const std::string model = modelSection(plan, &warnings);
    nemoWarnings(plan, &warnings);
    config.launcher = launch::torchrunLine(plan, "megatron_gpt_pretraining.py --config-path . "
                                                 "--config-name CONFIG");
    config.warnings = warnings;
    std::string text = launch::headerComment(plan, config.release, "# ");
    text += "# Merge " + fileName +
            " into a full NeMo config (such as megatron_llama_config.yaml), named as CONFIG\n"
            "# below; data and tokenizer are yours to add.\n";
    text += "# launch: " + launch::oneLine(config.launcher) + "\n";
    for (const std::string& w : warnings)
        text += "# warning: " + launch::oneLine(w) + "\n";
    config.text = text + trainer + model;
}

} // namespace paraplan
