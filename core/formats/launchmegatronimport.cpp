// Megatron-LM flags read back into a plan: a torchrun (or python) script running
// pretrain_gpt.py, or the bare flags. Shell comments, line continuations and quoting are
// understood; variables, command substitution and redirections in the flags are refused.
#include "launchconfigdetail.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace paraplan {
namespace {

struct Word
{
    std::string text;
    bool expands = false; ///< holds $, ` or a redirection: the shell would change it
};
using Command = std::vector<Word>;

/// Splits shell text into commands of words. False with *error on an unterminated quote.
bool shellCommands(const std::string& s, std::vector<Command>* commands, std::string* error)
{
    Command command;
    Word word;
    bool inWord = false;
    auto endWord = [&] {
        if (inWord)
            command.push_back(word);
        word = Word();
        inWord = false;
    };
    auto endCommand = [&] {
        endWord();
        if (!command.empty())
            commands->push_back(command);
        command.clear();
    };
    int line = 1;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '\\' && i + 1 < s.size()) {
            if (s[i + 1] == '\n') {
                ++i;
                ++line;
                continue;
            }
            word.text += s[++i];
            inWord = true;
        } else if (c == '#' && !inWord) {
            while (i + 1 < s.size() && s[i + 1] != '\n')
                ++i;
        } else if (c == '\'') {
            const size_t end = s.find('\'', i + 1);
            if (end == std::string::npos) {
                *error = "line " + std::to_string(line) + ": a single quote is never closed";
                return false;
            }
            word.text += s.substr(i + 1, end - i - 1);
            inWord = true;
            i = end;
        } else if (c == '"') {
            size_t j = i + 1;
            for (; j < s.size() && s[j] != '"'; ++j) {
                if (s[j] == '\\' && j + 1 < s.size() &&
                    std::string("\"\\$`").find(s[j + 1]) != std::string::npos) {
                    word.text += s[++j];
                    continue;
                }
                if (s[j] == '$' || s[j] == '`')
                    word.expands = true;
                if (s[j] == '\n')
                    ++line;
                word.text += s[j];
            }
            if (j >= s.size()) {
                *error = "line " + std::to_string(line) + ": a double quote is never closed";
                return false;
            }
            inWord = true;
            i = j;
        } else if (c == '\n' || c == ';' || c == '|' || c == '&') {
            if (c == '\n')
                ++line;
            endCommand();
        } else if (c == ' ' || c == '\t' || c == '\r') {
            endWord();
        } else {
            if (c == '$' || c == '`' || c == '<' || c == '>' || c == '(' || c == ')')
                word.expands = true;
            word.text += c;
            inWord = true;
        }
    }
    endCommand();
    return true;
}

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
        {"--moe-token-dispatcher-type", 1},
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
        {"--grad-reduce-in-bf16", 0},
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

bool readFlags(const std::vector<Word>& words, FlagValues* flags, LaunchImport* result)
{
    const std::map<std::string, int>& handled = handledFlags();
    for (size_t i = 0; i < words.size(); ++i) {
        const Word& w = words[i];
        if (w.expands) {
            result->errors.push_back("'" + w.text +
                                     "': shell variables, command substitution and "
                                     "redirections cannot be read; write the value itself");
            return false;
        }
        if (w.text.rfind("--", 0) != 0) {
            result->errors.push_back("'" + w.text + "' is not a --flag (nor the value of one)");
            return false;
        }
        std::string name = w.text;
        std::vector<std::string> values;
        const size_t eq = name.find('=');
        if (eq != std::string::npos) {
            values.push_back(name.substr(eq + 1));
            name = name.substr(0, eq);
        }
        while (eq == std::string::npos && i + 1 < words.size() &&
               words[i + 1].text.rfind("--", 0) != 0) {
            if (words[i + 1].expands) {
                result->errors.push_back(name + " '" + words[i + 1].text +
                                         "': shell variables, command substitution and "
                                         "redirections cannot be read; write the value itself");
                return false;
            }
            values.push_back(words[++i].text);
        }
        const auto known = handled.find(name);
        if (known != handled.end()) {
            if (known->second == 0 && !values.empty()) {
                result->errors.push_back(name + " is a switch and takes no value (got '" +
                                         values.front() + "')");
                return false;
            }
            if (known->second == 1 && values.size() != 1) {
                result->errors.push_back(name + " takes one value (got " +
                                         std::to_string(values.size()) + ")");
                return false;
            }
        } else {
            result->warnings.push_back(name + " is not a plan setting Paraplan reads: ignored");
        }
        if (flags->count(name))
            result->warnings.push_back(name + " is given twice: the last one counts");
        (*flags)[name] = values;
    }
    return true;
}

/// The pretrain_gpt.py command's flags and the launcher's world size (0: not given).
bool findFlags(const std::vector<Command>& commands, std::vector<Word>* flags, long long* world,
               LaunchImport* result)
{
    for (const Command& command : commands) {
        for (size_t i = 0; i < command.size(); ++i) {
            const std::string& t = command[i].text;
            if (t.size() < 15 || t.compare(t.size() - 15, 15, "pretrain_gpt.py") != 0)
                continue;
            long long nodes = 0;
            long long perNode = 0;
            for (size_t j = 0; j + 1 < i; ++j) {
                const std::string& a = command[j].text;
                const Word& v = command[j + 1];
                if (v.expands)
                    continue;
                if (a == "--nnodes")
                    nodes = std::atoll(v.text.c_str());
                if (a == "--nproc-per-node" || a == "--nproc_per_node")
                    perNode = std::atoll(v.text.c_str());
            }
            *world = nodes > 0 && perNode > 0 ? nodes * perNode : 0;
            flags->assign(command.begin() + static_cast<long>(i) + 1, command.end());
            for (const Command& other : commands) {
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
    for (const Command& command : commands) {
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

LaunchImport importMegatron(const std::string& text, const Plan& base,
                            const HardwareCatalog& catalog)
{
    LaunchImport result;
    result.plan = base;
    std::vector<Command> commands;
    std::string error;
    if (!shellCommands(text, &commands, &error)) {
        result.errors.push_back(error);
        return result;
    }
    std::vector<Word> words;
    long long world = 0;
    if (!findFlags(commands, &words, &world, &result))
        return result;
    FlagValues flags;
    if (!readFlags(words, &flags, &result))
        return result;
    launch::applyMegatronFlags(flags, world, &result, catalog);
    return result;
}

} // namespace paraplan
