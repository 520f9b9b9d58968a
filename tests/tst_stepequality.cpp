// The engine's speed-ups change no result: every field of StepEngine::evaluate's answer (each
// double bit for bit, every string, every rejected plan's rules and messages) over a sweep of
// layouts of every bundled example and every calibration set's plan equals what the engine
// answered before them (tests/data/step-reference.txt, written by the engine at commit f4f92a1,
// before the evaluation work of issue 17; rewritten for issue 24, where a ZeRO-3 layout stopped
// switching its plan to PyTorch kernels). Regenerate only for an intended change of the model:
// PARAPLAN_WRITE_STEP_REFERENCE=FILE build/tests/tst_stepequality
// StepEngine::evaluate(plan, into) is compared against the same reference, with one StepCost
// reused over the whole sweep.
#include "calibration.h"
#include "clusterio.h"
#include "cnumeric.h"
#include "fieldcount.h"
#include "layercost.h"
#include "modelio.h"
#include "planio.h"
#include "stepmodel.h"
#include "testplans.h"

#include <QDir>
#include <QFile>
#include <QTest>

#include <cinttypes>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

using namespace paraplan;

namespace {

// Every field of an answer as text: doubles in hexadecimal (exact), the rest as written.
class Fingerprint
{
public:
    void add(double v)
    {
        char buf[40];
        paraplan::cSnprintf(buf, sizeof buf, "%a;", v); // the same text in every locale
        m_text += buf;
    }
    void add(long long v) { m_text += std::to_string(v) + ";"; }
    void add(int v) { add(static_cast<long long>(v)); }
    void add(size_t v) { add(static_cast<long long>(v)); }
    void add(bool v) { m_text += v ? "T;" : "F;"; }
    void add(const char* s) { m_text += std::string(s ? s : "(null)") + ";"; }
    void add(const std::string& s) { m_text += s + ";"; }
    template <typename E> void addEnum(E e) { add(static_cast<long long>(e)); }

    const std::string& text() const { return m_text; }

private:
    std::string m_text;
};

void addCollective(Fingerprint& f, const CollectiveResult& r)
{
    f.add(r.ok);
    f.add(r.error);
    f.addEnum(r.op);
    f.addEnum(r.algorithm);
    f.addEnum(r.protocol);
    for (double v : {r.bytes, r.time_s, r.latency_s, r.bandwidth_time_s,
                     r.protocol_bandwidth_fraction, r.algbw_Bps, r.busbw_Bps, r.wire_bytes_per_rank,
                     r.bottleneck_Bps, r.latency_base_s, r.intra_hop_s, r.inter_hop_s})
        f.add(v);
    f.add(r.ranks);
    f.addEnum(r.bottleneck);
    f.addEnum(r.regime);
    for (int v :
         {r.gpus_per_node_in_group, r.nodes_spanned, r.racks_spanned, r.torus_group_dims[0],
          r.torus_group_dims[1], r.torus_group_dims[2], r.intra_hops, r.inter_hops, r.phase_count})
        f.add(v);
    for (int i = 0; i < r.phase_count; ++i) {
        const CollectivePhase& ph = r.phases[static_cast<size_t>(i)];
        f.add(ph.what);
        f.add(ph.formula);
        f.addEnum(ph.tier);
        f.add(ph.ranks);
        f.add(ph.wire_bytes_per_rank);
        f.add(ph.bandwidth_Bps);
        f.add(ph.time_s);
    }
    f.add(r.phases_concurrent);
    f.add(r.note);
}

void addLayer(Fingerprint& f, const LayerCompute& l)
{
    f.add(l.gemm_count);
    for (size_t i = 0; i < l.gemm_count; ++i) {
        const GemmTiming& g = l.gemms[i];
        f.add(g.name);
        for (double v : {g.M, g.K, g.N, g.batch, g.flops, g.efficiency, g.compute_s, g.operands_s,
                         g.output_s, g.slowdown, g.time_s})
            f.add(v);
    }
    for (double v :
         {l.gemm_forward_s, l.gemm_backward_s, l.gemm_efficiency, l.attention_forward_s,
          l.attention_backward_s, l.elementwise_forward_s, l.elementwise_backward_s, l.forward_s,
          l.backward_s, l.recompute_s, l.gemm_forward_flops, l.attention_forward_flops,
          l.elementwise_forward_bytes, l.elementwise_backward_bytes})
        f.add(v);
}

std::string fingerprint(const StepCost& c)
{
    Fingerprint f;
    f.add(c.ok);
    for (const PlanIssue& issue : c.issues) {
        f.add(issue.rule);
        f.add(issue.field);
        f.add(issue.message);
    }
    for (const std::string& w : c.warnings)
        f.add(w);
    f.add(c.step_time_s);
    for (const BreakdownComponent& component : kBreakdownComponents)
        f.add(c.breakdown.*component.field);
    f.add(c.collectives.size());
    for (const CollectiveCost& cc : c.collectives) {
        f.add(cc.group);
        f.add(cc.purpose);
        addCollective(f, cc.call);
        f.add(cc.stride);
        f.add(cc.calls_per_step);
        f.add(cc.total_s);
        f.add(cc.exposed_s);
    }
    f.add(c.stages.size());
    for (const StageCost& s : c.stages) {
        f.add(s.stage);
        f.add(s.layers);
        f.add(s.moe_layers);
        for (double v :
             {s.params, s.forward_s, s.backward_s, s.recompute_s, s.tp_comm_s, s.cp_comm_exposed_s,
              s.ep_comm_s, s.pp_comm_s, s.microbatch_s, s.weights_bytes, s.grads_bytes,
              s.optimizer_bytes, s.activations_bytes, s.buffers_bytes, s.total_bytes,
              s.in_flight_microbatches, s.activation_bytes_per_layer})
            f.add(v);
        f.add(s.fits);
    }
    f.add(c.critical_stage);
    f.add(c.max_stage_total_bytes);
    f.add(c.hbm_bytes);
    f.add(c.fits);
    f.add(c.fullest_stage);
    f.add(c.max_stage_reserved_bytes);
    f.add(c.runtime_reserve_bytes);
    f.add(c.tight);
    const StepMetrics& m = c.metrics;
    for (double v :
         {m.tokens_per_step, m.tokens_per_s, m.model_flops_per_step, m.hardware_flops_per_step,
          m.peak_flops_per_gpu, m.mfu, m.hfu, m.time_to_train_s, m.gpu_hours, m.cost_usd})
        f.add(v);
    addLayer(f, c.dense_layer);
    addLayer(f, c.moe_layer);
    f.add(c.lm_head_s);
    f.add(c.embedding_s);
    f.add(c.microbatches);
    f.add(c.tp_within_node);
    for (const LinkUse& link : c.links) {
        f.addEnum(link.tier);
        f.add(link.busy_s);
        f.add(link.share);
        f.add(link.busiest_group);
    }
    const StepAssumptions& a = c.assumptions;
    f.addEnum(a.attention);
    f.addEnum(a.kernels);
    f.add(a.tp_overlap);
    f.add(a.grad_reduce_bytes);
    f.add(a.attention_fwd_figure.value);
    f.addEnum(a.attention_fwd_figure.origin);
    f.add(a.attention_fwd_figure.source);
    f.add(a.attention_bwd_figure.value);
    f.addEnum(a.attention_bwd_figure.origin);
    f.add(a.attention_bwd_figure.source);
    f.add(a.attention_fwd_share);
    f.add(a.attention_bwd_share);
    f.add(a.pytorch_framework);
    f.add(a.slowest_gpu_factor);
    return f.text();
}

// FNV-1a, 64 bits: the reference file keeps one hash per group of answers.
uint64_t hash(const std::string& text, uint64_t h = 1469598103934665603ULL)
{
    for (unsigned char ch : text) {
        h ^= ch;
        h *= 1099511628211ULL;
    }
    return h;
}

struct Base
{
    std::string name;
    Plan plan;
};

std::vector<Base> bases()
{
    std::vector<Base> out;
    const QDir examples(PARAPLAN_SOURCE_DIR "/resources/examples");
    for (const QString& file : examples.entryList({"*.paraplan.json"}, QDir::Files, QDir::Name)) {
        Base b;
        b.name = file.toStdString();
        std::vector<std::string> errors;
        if (!loadPlan(examples.filePath(file).toStdString(), &b.plan, &errors,
                      HardwareCatalog::bundled()))
            qFatal("cannot load %s", b.name.c_str());
        out.push_back(b);
    }
    // A mixture of experts (expert parallelism) and context parallelism at 16,384 GPUs, which
    // neither the examples nor the calibration sets have.
    auto preset = [&out](const char* model, int nodes, int cp, int ep, int seq) {
        Base b;
        b.name = std::string("preset ") + model + " dgx-h100 x" + std::to_string(nodes) + " cp" +
                 std::to_string(cp) + " ep" + std::to_string(ep);
        std::string error;
        ClusterOptions options;
        options.nodes = nodes;
        if (!modelFromPreset(model, &b.plan.model, &error) ||
            !clusterFromPreset("dgx-h100", options, &b.plan.cluster, &error,
                               HardwareCatalog::bundled()))
            qFatal("%s", error.c_str());
        ParallelLayout& p = b.plan.parallel;
        p.tp = 8;
        p.cp = cp;
        p.ep = ep;
        p.dp = nodes * 8 / (8 * cp);
        p.zero = 1;
        p.micro_batch = 1;
        p.global_batch = p.dp * 16;
        b.plan.training.seq_len = seq;
        b.plan.figures =
            defaultEngineFigures(*HardwareCatalog::bundled().gpu(b.plan.cluster.gpu_id),
                                 b.plan.training.optimizer, b.plan.training.dtype);
        out.push_back(b);
    };
    preset("mixtral-8x7b", 8, 1, 8, 4096);
    preset("llama3-405b", 2048, 2, 1, 8192);
    for (const std::string& path : bundledCalibrationSets()) {
        CalibrationReport report;
        std::string error;
        if (!runCalibration(path, &report, &error, HardwareCatalog::bundled()))
            qFatal("%s", error.c_str());
        for (const CalibrationRow& row : report.rows)
            out.push_back({report.id + "/" + row.name, row.plan});
    }
    return out;
}

// One line per base plan and (tp, pp): the hash of the answers for every ZeRO stage,
// recompute mode and sequence-parallel setting at that degree (dp fills the cluster), then
// the plan as written. With `reused`, every answer comes from StepEngine::evaluate(plan, into)
// into that one StepCost (rejected plans, plans with warnings and different pipelines in turn,
// so whatever an answer kept of the one before would change the hashes).
std::map<std::string, std::string> sweep(int* evaluated, int* accepted, StepCost* reused = nullptr)
{
    std::map<std::string, std::string> lines;
    for (const Base& base : bases()) {
        const StepEngine engine(base.plan.cluster, HardwareCatalog::bundled());
        auto answer = [&engine, reused](const Plan& p) {
            if (!reused)
                return fingerprint(engine.evaluate(p));
            engine.evaluate(p, *reused);
            return fingerprint(*reused);
        };
        {
            const std::string key = base.name + " as-written";
            char value[32];
            std::snprintf(value, sizeof value, "%016" PRIx64, hash(answer(base.plan)));
            lines[key] = value;
            ++*evaluated;
        }
        for (int tp : {1, 2, 4, 8}) {
            for (int pp : {1, 2, 4, 8, 16}) {
                uint64_t h = 1469598103934665603ULL;
                for (int zero : {0, 1, 2, 3}) {
                    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
                        for (bool sp : {false, true}) {
                            const Plan p = test::sweptLayout(base.plan, tp, pp, zero, r, sp);
                            const std::string text = answer(p);
                            h = hash(text, h);
                            ++*evaluated;
                            *accepted += text.compare(0, 2, "T;") == 0 ? 1 : 0;
                        }
                    }
                }
                char key[16];
                std::snprintf(key, sizeof key, " tp%d pp%d", tp, pp);
                char value[32];
                std::snprintf(value, sizeof value, "%016" PRIx64, h);
                lines[base.name + key] = value;
            }
        }
    }
    return lines;
}

} // namespace

class TestStepEquality : public QObject
{
    Q_OBJECT

private slots:
    void cacheKeysCoverEveryField()
    {
        // The engine's per-thread tables key on modelNumbers() (validation, parameter count,
        // per-layer costs) and, for the per-layer costs, on the layer context too. A field
        // added to ModelSpec or to layercost::Context changes these counts: key it, then
        // count it here.
        // The numbers, the two layer patterns, name, preset, source.
        QCOMPARE(test::fieldCount<ModelSpec>(), size_t(31));
        // (Counted from its three references on: an aggregate with references cannot be
        // braced from fewer.)
        using test::AnyField;
        QCOMPARE((test::fieldCount<layercost::Context, AnyField, AnyField, AnyField>()),
                 size_t(41)); // layerKey in stepmodel.cpp
        const std::vector<std::function<void(ModelSpec&)>> changes = {
            [](ModelSpec& m) { ++m.layers; },
            [](ModelSpec& m) { ++m.hidden; },
            [](ModelSpec& m) { ++m.heads; },
            [](ModelSpec& m) { ++m.kv_heads; },
            [](ModelSpec& m) { ++m.head_dim; },
            [](ModelSpec& m) { ++m.ffn_hidden; },
            [](ModelSpec& m) { ++m.vocab; },
            [](ModelSpec& m) { m.mlp = m.mlp == MlpKind::GeLU ? MlpKind::SwiGLU : MlpKind::GeLU; },
            [](ModelSpec& m) { m.tied_embeddings = !m.tied_embeddings; },
            [](ModelSpec& m) { m.learned_positions = !m.learned_positions; },
            [](ModelSpec& m) { ++m.max_positions; },
            [](ModelSpec& m) { m.biases = !m.biases; },
            [](ModelSpec& m) { m.dropout = !m.dropout; },
            [](ModelSpec& m) { ++m.experts; },
            [](ModelSpec& m) { ++m.experts_per_token; },
            [](ModelSpec& m) { ++m.expert_ffn_hidden; },
            [](ModelSpec& m) { ++m.dense_layers; },
            [](ModelSpec& m) { ++m.shared_expert_ffn_hidden; },
            [](ModelSpec& m) { ++m.q_lora_rank; },
            [](ModelSpec& m) { ++m.kv_lora_rank; },
            [](ModelSpec& m) { ++m.rope_head_dim; },
            [](ModelSpec& m) { ++m.v_head_dim; },
            [](ModelSpec& m) { m.capacity_factor += 1; },
            [](ModelSpec& m) { m.sliding_window += 128; },
            [](ModelSpec& m) { m.attention_sinks = !m.attention_sinks; },
            [](ModelSpec& m) { ++m.mtp_layers; },
            [](ModelSpec& m) { m.moe_layer_pattern.push_back(1); },
            [](ModelSpec& m) { m.sliding_pattern.push_back(1); },
        };
        QCOMPARE(changes.size() + 3, test::fieldCount<ModelSpec>());
        QCOMPARE(changes.size(), std::tuple_size_v<ModelNumbers>);
        ModelSpec base;
        std::string error;
        QVERIFY2(modelFromPreset("gpt3-175b", &base, &error), error.c_str());
        std::set<ModelNumbers> seen{modelNumbers(base)};
        for (size_t k = 0; k < changes.size(); ++k) {
            ModelSpec changed = base;
            changes[k](changed);
            QVERIFY2(seen.insert(modelNumbers(changed)).second, qPrintable(QString::number(k)));
        }
        ModelSpec renamed = base; // the names and source are not numbers the engine reads
        renamed.name += " copy";
        renamed.source += " (copy)";
        QVERIFY(modelNumbers(renamed) == modelNumbers(base));
    }
    void everyAnswerEqualsTheReference_data()
    {
        QTest::addColumn<bool>("reuse");
        QTest::newRow("evaluate(plan)") << false;
        QTest::newRow("evaluate(plan, into) with one StepCost") << true;
    }
    void everyAnswerEqualsTheReference()
    {
        QFETCH(bool, reuse);
        int evaluated = 0;
        int accepted = 0;
        StepCost reused;
        const std::map<std::string, std::string> now =
            sweep(&evaluated, &accepted, reuse ? &reused : nullptr);
        const QByteArray write = qgetenv("PARAPLAN_WRITE_STEP_REFERENCE");
        if (!write.isEmpty() && reuse)
            QSKIP("the reference is written from evaluate(plan)");
        if (!write.isEmpty()) {
            QFile out(QString::fromLocal8Bit(write));
            QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
            for (const auto& [key, value] : now)
                out.write((key + " " + value + "\n").c_str());
            qInfo("wrote %zu lines (%d evaluations, %d accepted)", now.size(), evaluated, accepted);
            return;
        }
        QFile in(PARAPLAN_TEST_DATA_DIR "/step-reference.txt");
        QVERIFY2(in.open(QIODevice::ReadOnly), qPrintable(in.fileName()));
        std::map<std::string, std::string> reference;
        while (!in.atEnd()) {
            const QString line = QString::fromUtf8(in.readLine()).trimmed();
            const qsizetype space = line.lastIndexOf(' ');
            if (space > 0)
                reference[line.left(space).toStdString()] = line.mid(space + 1).toStdString();
        }
        // The sweep covers the examples, the calibration plans and 480 layouts of each.
        // Both accepted plans and rejected ones (their rules and messages) are compared.
        QVERIFY(evaluated > 10000);
        QVERIFY2(accepted > 2000, qPrintable(QString::number(accepted)));
        QCOMPARE(now.size(), reference.size());
        int differing = 0;
        for (const auto& [key, value] : now) {
            const auto it = reference.find(key);
            if (it == reference.end() || it->second != value) {
                qWarning("differs from the reference: %s", key.c_str());
                ++differing;
            }
        }
        QCOMPARE(differing, 0);
    }

    // One engine evaluating plans of different models (its per-thread tables of layer and
    // collective answers are keyed by what they depend on, not by the engine alone) answers
    // as an engine built for each plan does.
    void oneEngineManyModelsEqualsFreshEngines()
    {
        const std::vector<Base> all = bases();
        const Plan& base = all.front().plan;
        const StepEngine shared(base.cluster, HardwareCatalog::bundled());
        std::vector<Plan> variants;
        auto vary = [&variants, &base](auto change) {
            Plan p = base;
            change(p.model);
            variants.push_back(p);
        };
        vary([](ModelSpec&) {});
        vary([](ModelSpec& m) { m.hidden += 128; });
        vary([](ModelSpec& m) { m.ffn_hidden *= 2; });
        vary([](ModelSpec& m) { m.kv_heads = m.heads / 8; });
        vary([](ModelSpec& m) { m.head_dim = 2 * m.headDim(); });
        vary([](ModelSpec& m) { m.vocab += 1000; });
        vary([](ModelSpec& m) {
            m.mlp = m.mlp == MlpKind::SwiGLU ? MlpKind::GeLU : MlpKind::SwiGLU;
        });
        vary([](ModelSpec& m) { m.dropout = !m.dropout; });
        vary([](ModelSpec& m) { m.biases = !m.biases; });
        vary([](ModelSpec& m) { m.learned_positions = !m.learned_positions; });
        int compared = 0;
        StepCost reused;
        for (int round = 0; round < 2; ++round) {
            for (const Plan& p : variants) {
                const StepCost fresh =
                    StepEngine(p.cluster, HardwareCatalog::bundled()).evaluate(p);
                shared.evaluate(p, reused);
                QCOMPARE(fingerprint(reused), fingerprint(fresh));
                QCOMPARE(fingerprint(shared.evaluate(p)), fingerprint(fresh));
                compared += fresh.ok ? 1 : 0;
            }
        }
        QVERIFY2(compared >= 16, qPrintable(QString::number(compared)));
    }

    // The model's checks remembered for the last model that passed them are not taken for
    // another: a broken model after a sound one (on the same thread, the same engine) gets
    // exactly validateModel's problems, and the sound one is accepted again after it.
    void aBrokenModelAfterASoundOneIsRejected()
    {
        // A dense base (experts_per_token breaks a dense model, not an MoE one).
        Plan sound;
        for (const Base& base : bases()) {
            if (!base.plan.model.isMoe()) {
                sound = base.plan;
                break;
            }
        }
        QVERIFY(sound.model.layers > 0);
        const StepEngine engine(sound.cluster, HardwareCatalog::bundled());
        StepCost cost;
        for (auto breakIt : std::vector<void (*)(ModelSpec&)>{
                 [](ModelSpec& m) { m.kv_heads = m.heads - 1; }, [](ModelSpec& m) { m.layers = 0; },
                 [](ModelSpec& m) { m.dense_layers = m.layers + 1; },
                 [](ModelSpec& m) { m.experts_per_token = 2; }}) {
            engine.evaluate(sound, cost);
            QVERIFY(cost.ok);
            Plan broken = sound;
            breakIt(broken.model);
            const std::vector<std::string> problems = validateModel(broken.model);
            QVERIFY(!problems.empty());
            engine.evaluate(broken, cost);
            QVERIFY(!cost.ok);
            QCOMPARE(cost.issues.size(), problems.size());
            for (size_t i = 0; i < problems.size(); ++i) {
                QCOMPARE(cost.issues[i].rule, std::string("model"));
                QCOMPARE(cost.issues[i].message, problems[i]);
            }
            QCOMPARE(validatePlan(broken, HardwareCatalog::bundled()).size(), problems.size());
        }
        engine.evaluate(sound, cost);
        QVERIFY(cost.ok);
    }

    // The fingerprint sees a change in any last bit of a result (so the comparison above can
    // fail): one ulp more on one stage's time changes it.
    void theFingerprintSeesOneBit()
    {
        const std::vector<Base> all = bases();
        QVERIFY(!all.empty());
        const StepEngine engine(all.front().plan.cluster, HardwareCatalog::bundled());
        StepCost cost = engine.evaluate(all.front().plan);
        QVERIFY(cost.ok);
        const std::string before = fingerprint(cost);
        cost.stages.back().microbatch_s = std::nextafter(cost.stages.back().microbatch_s, 1e300);
        QVERIFY(fingerprint(cost) != before);
    }
};

QTEST_GUILESS_MAIN(TestStepEquality)
#include "tst_stepequality.moc"
