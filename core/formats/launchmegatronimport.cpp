// Megatron-LM flags read back into a plan: a torchrun (or python) script running
// pretrain_gpt.py, or the bare flags. Shell comments, line continuations and quoting are
// understood, and so are the scripts Megatron-LM's examples are (examples/gpt3,
// examples/llama): scalar assignments NAME=value and arrays NAME=( ... ) / NAME+=( ... ) set
// before the command, expanded where it uses them ($NAME, ${NAME}, ${NAME:-default},
// ${NAME[@]}, quoted or not). A value the script does not set (the environment, an argument) is
// an error only where the plan needs it; command substitution, arithmetic and redirections in
// the command are refused, and nothing in the script is run.
#include "launchconfigdetail.h"
#include "launchshell.h"
#include "planio.h"

#include <QFile>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace paraplan {
namespace {

using shell::Field;

using FlagValues = launch::MegatronFlags;

/// The flags Paraplan reads and whether each takes a value (1) or is a switch (0).
const std::map<std::string, int>& handledFlags()
{
    static const std::map<std::string, int> flags = {
        {"--num-layers", 1},
        {"--hidden-size", 1},
        {"--ffn-hidden-size", 1},
        {"--num-attention-heads", 1},
        {"--group-query-attention", 0},
        {"--num-query-groups", 1},
        {"--kv-channels", 1},
        {"--seq-length", 1},
        {"--max-position-embeddings", 1},
        {"--position-embedding-type", 1},
        {"--swiglu", 0},
        {"--untie-embeddings-and-output-weights", 0},
        {"--disable-bias-linear", 0},
        {"--normalization", 1},
        {"--attention-dropout", 1},
        {"--hidden-dropout", 1},
        {"--vocab-size", 1},
        {"--padded-vocab-size", 1},
        {"--tokenizer-type", 1},
        {"--mock-data", 0},
        {"--num-experts", 1},
        {"--moe-router-topk", 1},
        {"--moe-ffn-hidden-size", 1},
        {"--moe-shared-expert-intermediate-size", 1},
        {"--moe-layer-freq", 1},
        {"--window-size", 1},
        {"--window-attn-skip-freq", 1},
        {"--mtp-num-layers", 1},
        {"--moe-token-dispatcher-type", 1},
        {"--moe-enable-deepep", 0},
        {"--moe-expert-capacity-factor", 1},
        {"--overlap-moe-expert-parallel-comm", 0},
        {"--moe-router-fusion", 0},
        {"--moe-grouped-gemm", 0},
        {"--te-rng-tracker", 0},
        {"--enable-cuda-graph", 0},
        {"--external-cuda-graph", 0},
        {"--cuda-graph-impl", 1},
        {"--cuda-graph-scope", 2},
        {"--cuda-graph-modules", 2},
        {"--expert-tensor-parallel-size", 1},
        {"--tensor-model-parallel-size", 1},
        {"--pipeline-model-parallel-size", 1},
        {"--context-parallel-size", 1},
        {"--expert-model-parallel-size", 1},
        {"--num-virtual-stages-per-pipeline-rank", 1},
        {"--num-layers-per-virtual-pipeline-stage", 1},
        {"--sequence-parallel", 0},
        {"--decoder-first-pipeline-num-layers", 1},
        {"--decoder-last-pipeline-num-layers", 1},
        {"--pipeline-model-parallel-layout", 1},
        {"--recompute-granularity", 1},
        {"--recompute-method", 1},
        {"--recompute-num-layers", 1},
        {"--recompute-modules", 2},
        {"--recompute-activations", 0},
        {"--micro-batch-size", 1},
        {"--global-batch-size", 1},
        {"--use-distributed-optimizer", 0},
        {"--use-megatron-fsdp", 0},
        {"--data-parallel-sharding-strategy", 1},
        {"--no-gradient-accumulation-fusion", 0},
        {"--num-distributed-optimizer-instances", 1},
        {"--ckpt-format", 1},
        {"--overlap-grad-reduce", 0},
        {"--overlap-param-gather", 0},
        {"--tp-comm-overlap", 0},
        {"--use-tp-pp-dp-mapping", 0},
        {"--bf16", 0},
        {"--fp16", 0},
        {"--fp8-format", 1},
        {"--fp8-recipe", 1},
        {"--fp8-param-gather", 0},
        {"--grad-reduce-in-bf16", 0},
        {"--use-precision-aware-optimizer", 0},
        {"--exp-avg-dtype", 1},
        {"--exp-avg-sq-dtype", 1},
        {"--optimizer", 1},
        {"--lr", 1},
        {"--min-lr", 1},
        {"--lr-decay-style", 1},
        {"--attention-backend", 1},
        {"--train-samples", 1},
        {"--train-iters", 1},
    };
    return flags;
}

/// Megatron-LM's own options (resources/launch/megatron-lm-options.txt: every --flag of
/// megatron/training/arguments.py at the pinned commit) and their arity: 0 a switch, 1 one value,
/// 2 a list.
const std::map<std::string, int>& megatronOptions()
{
    static const std::map<std::string, int> options = [] {
        std::map<std::string, int> read;
        QFile file(QStringLiteral(":/paraplan/launch/megatron-lm-options.txt"));
        if (!file.open(QIODevice::ReadOnly))
            return read;
        for (const QByteArray& raw : file.readAll().split('\n')) {
            const QList<QByteArray> parts = raw.simplified().split(' ');
            if (parts.size() == 2 && parts[0].startsWith("--"))
                read[parts[0].toStdString()] = parts[1] == "switch" ? 0
                                               : parts[1] == "list" ? 2
                                                                    : 1;
        }
        return read;
    }();
    return options;
}

// The edit distance between two option names, with '_' and '-' alike (a misspelled flag's
// nearest known one).
size_t editDistance(const std::string& a, const std::string& b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const char x = a[i - 1] == '_' ? '-' : a[i - 1];
            const char y = b[j - 1] == '_' ? '-' : b[j - 1];
            const size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (x == y ? 0 : 1)});
            diagonal = row[j];
            row[j] = next;
        }
    }
    return row[b.size()];
}

/// "--num-layers" for "--num_layers", "--tensor-model-parallel-size" for
/// "--tensor-model-parallel": the known option nearest to `name` (a prefix counts as near).
std::string nearestOption(const std::string& name)
{
    std::string best;
    size_t bestDistance = std::string::npos;
    for (const auto& [option, arity] : megatronOptions()) {
        (void)arity;
        const size_t d = option.rfind(name, 0) == 0 ? 1 : editDistance(name, option);
        if (d < bestDistance) {
            bestDistance = d;
            best = option;
        }
    }
    return bestDistance <= std::max<size_t>(3, name.size() / 4) ? best : std::string();
}

/// Why a field that is not Known cannot be read, and what to write instead.
std::string unreadable(const Field& f, const std::string& instead)
{
    if (f.state == Field::Refused)
        return f.why + ": " + instead;
    return f.why +
           " (of shell variables, command substitution and redirections, Paraplan reads "
           "only values the script itself writes): " +
           instead;
}

bool readFlags(const std::vector<Field>& words, FlagValues* flags, LaunchImport* result)
{
    const std::map<std::string, int>& handled = handledFlags();
    for (size_t i = 0; i < words.size(); ++i) {
        const Field& w = words[i];
        const size_t eq = w.text.find('=');
        const bool named =
            w.text.rfind("--", 0) == 0 &&
            (w.state == Field::Known || (eq != std::string::npos && w.text.find('$') > eq));
        if (w.state == Field::Refused || !named) {
            if (w.state != Field::Known) {
                result->errors.push_back("'" + w.text +
                                         "': " + unreadable(w, "write the flags themselves"));
                return false;
            }
            result->errors.push_back("'" + w.text + "' is not a --flag (nor the value of one)");
            return false;
        }
        std::string name = w.text;
        std::vector<Field> values;
        if (eq != std::string::npos) {
            Field v = w;
            v.text = name.substr(eq + 1);
            values.push_back(v);
            name = name.substr(0, eq);
        }
        const auto known = handled.find(name);
        // Megatron-LM refuses a flag that is not its own at parse time (its parser takes no
        // abbreviations): so does the import, naming the option meant.
        const auto option = megatronOptions().find(name);
        if (known == handled.end() && option == megatronOptions().end() &&
            !megatronOptions().empty()) {
            const std::string nearest = nearestOption(name);
            result->errors.push_back(
                name +
                " is not a Megatron-LM option (megatron/training/arguments.py; "
                "Megatron-LM refuses it too)" +
                (nearest.empty() ? std::string() : ": did you mean " + nearest + "?"));
            return false;
        }
        const bool isSwitch =
            (known != handled.end() && known->second == 0) ||
            (known == handled.end() && option != megatronOptions().end() && option->second == 0);
        // A word that is not known after a switch is read as the next flags, not its value.
        while (eq == std::string::npos && i + 1 < words.size() &&
               (words[i + 1].state == Field::Known ? words[i + 1].text.rfind("--", 0) != 0
                                                   : !isSwitch))
            values.push_back(words[++i]);
        for (const Field& v : values) {
            if (v.state == Field::Refused ||
                (v.state == Field::Unknown && known != handled.end())) {
                result->errors.push_back(name + " '" + v.text +
                                         "': " + unreadable(v, "write the value itself"));
                return false;
            }
        }
        if (known != handled.end()) {
            if (known->second == 0 && !values.empty()) {
                result->errors.push_back(name + " is a switch and takes no value (got '" +
                                         values.front().text + "')");
                return false;
            }
            if (known->second == 1 && values.size() != 1) {
                result->errors.push_back(name + " takes one value (got " +
                                         std::to_string(values.size()) + ")");
                return false;
            }
            if (known->second == 2 && values.empty()) {
                result->errors.push_back(name + " takes one value or more (got none)");
                return false;
            }
        } else {
            result->warnings.push_back(name + " is not a plan setting Paraplan reads: ignored");
        }
        if (flags->count(name))
            result->warnings.push_back(name + " is given twice: the last one counts");
        std::vector<std::string>& texts = (*flags)[name];
        texts.clear();
        for (const Field& v : values)
            texts.push_back(v.text);
    }
    return true;
}

/// A command that tests or prints the script's name rather than running it.
bool notARun(const std::vector<Field>& command)
{
    static const std::set<std::string> heads = {"if",   "while", "until",  "[",  "[[",
                                                "test", "echo",  "printf", "ls", "cat"};
    return heads.count(command.front().text) > 0;
}

/// The pretrain_gpt.py command's flags and the launcher's world size (0: not given).
bool findFlags(const std::vector<std::vector<Field>>& commands, std::vector<Field>* flags,
               long long* world, LaunchImport* result)
{
    for (const std::vector<Field>& command : commands) {
        if (notARun(command))
            continue;
        for (size_t i = 0; i < command.size(); ++i) {
            // The script by name, its folder a variable or not (${MEGATRON_PATH}/pretrain_gpt.py).
            const std::string& t = command[i].text;
            const bool named = t.size() >= 15 &&
                               t.compare(t.size() - 15, 15, "pretrain_gpt.py") == 0 &&
                               (t.size() == 15 || t[t.size() - 16] == '/');
            if (command[i].state == Field::Refused || !named)
                continue;
            long long nodes = 0;
            long long perNode = 0;
            for (size_t j = 0; j + 1 < i; ++j) {
                const std::string& a = command[j].text;
                const Field& v = command[j + 1];
                if (v.state != Field::Known)
                    continue;
                if (a == "--nnodes")
                    nodes = std::atoll(v.text.c_str());
                if (a == "--nproc-per-node" || a == "--nproc_per_node")
                    perNode = std::atoll(v.text.c_str());
            }
            *world = nodes > 0 && perNode > 0 ? nodes * perNode : 0;
            flags->assign(command.begin() + static_cast<long>(i) + 1, command.end());
            for (const std::vector<Field>& other : commands) {
                if (&other != &command && other.front().text.rfind("--", 0) == 0)
                    result->warnings.push_back(
                        "'" + other.front().text +
                        "' starts a line of its own, outside the pretrain_gpt.py command (a "
                        "missing backslash?): ignored");
            }
            return true;
        }
    }
    // Bare flags: every command starts with a --flag.
    for (const std::vector<Field>& command : commands) {
        if (command.front().text.rfind("--", 0) != 0) {
            result->errors.push_back("no pretrain_gpt.py command in the file, and '" +
                                     command.front().text +
                                     "' is not a --flag: give a Megatron-LM launch script or "
                                     "its flags");
            return false;
        }
        flags->insert(flags->end(), command.begin(), command.end());
    }
    if (flags->empty()) {
        result->errors.push_back("the file holds no Megatron-LM flags");
        return false;
    }
    return true;
}

} // namespace

namespace {

LaunchImport importCommands(const std::vector<std::vector<Field>>& commands, const Plan& base,
                            const HardwareCatalog& catalog)
{
    LaunchImport result;
    result.plan = base;
    std::vector<Field> words;
    long long world = 0;
    if (!findFlags(commands, &words, &world, &result))
        return result;
    FlagValues flags;
    if (!readFlags(words, &flags, &result))
        return result;
    launch::applyMegatronFlags(flags, world, &result, catalog);
    return result;
}

} // namespace

LaunchImport importMegatron(const std::string& text, const Plan& base,
                            const HardwareCatalog& catalog)
{
    std::vector<std::vector<std::vector<Field>>> variants;
    std::vector<std::string> blocks;
    std::string error;
    if (!shell::readScriptVariants(text, &variants, &blocks, &error)) {
        LaunchImport refused;
        refused.plan = base;
        refused.errors.push_back(error);
        return refused;
    }
    // Each way the if blocks of unknown tests can go, read as its own script: one plan for all
    // of them is the script's plan; plans that differ name the block they depend on.
    LaunchImport first = importCommands(variants.front(), base, catalog);
    const std::string firstPlan = first.errors.empty() ? planToJsonText(first.plan, catalog) : "";
    for (size_t k = 1; k < variants.size(); ++k) {
        const LaunchImport other = importCommands(variants[k], base, catalog);
        const std::string otherPlan =
            other.errors.empty() ? planToJsonText(other.plan, catalog) : "";
        if (other.errors == first.errors && otherPlan == firstPlan)
            continue;
        size_t bit = 0;
        while (bit + 1 < blocks.size() && !((k >> bit) & 1u))
            ++bit;
        // What the two readings disagree on: an error in one of them, or the first line of
        // the plans that differs.
        std::string differs;
        if (!first.errors.empty() || !other.errors.empty()) {
            differs = !first.errors.empty() ? first.errors.front() + " (the block not taken)"
                                            : other.errors.front() + " (the block taken)";
        } else {
            std::istringstream a(firstPlan);
            std::istringstream b(otherPlan);
            std::string la;
            std::string lb;
            while (std::getline(a, la) && std::getline(b, lb) && la == lb) {
            }
            auto trim = [](const std::string& s) {
                const size_t from = s.find_first_not_of(' ');
                return from == std::string::npos ? std::string() : s.substr(from);
            };
            differs = "not taken, the plan reads '" + trim(la) + "'; taken, '" + trim(lb) + "'";
        }
        LaunchImport refused;
        refused.plan = base;
        refused.errors.push_back("the plan depends on the if block '" +
                                 (blocks.empty() ? std::string("?") : blocks[bit]) +
                                 "', whose test Paraplan cannot evaluate (it reads the "
                                 "environment, an argument or a command): " +
                                 differs +
                                 "; set what it sets outside the block, or write the flags "
                                 "themselves");
        return refused;
    }
    for (size_t b = 0; b < blocks.size(); ++b)
        first.warnings.push_back(
            b < size_t(shell::kMaxUnknownBlocks)
                ? "the if block '" + blocks[b] +
                      "' was read both ways (its test is not the script's to decide): the plan "
                      "is the same"
                : "the if block '" + blocks[b] + "' was read as not taken (more than " +
                      std::to_string(shell::kMaxUnknownBlocks) + " blocks of unknown tests)");
    return first;
}

} // namespace paraplan
