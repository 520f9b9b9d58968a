// Every figure's source is a public document a reader can find, or Paraplan's own docs: the
// preset files and every string the engine writes into a derivation, a headline or the
// provenance of the bundled example plans (on every cluster preset) are checked for internal
// paths and notes. Every symbol of every derivation formula is defined, and a step that shows
// its result as a sum of terms adds up, on screen too.

#include "clusterio.h"
#include "collectivewalkthrough.h"
#include "hardware.h"
#include "modelio.h"
#include "planio.h"
#include "stepwalkthrough.h"
#include "summary.h"
#include "units.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

#include <cmath>

using namespace paraplan;

namespace {

const QString kSourceDir = QStringLiteral(PARAPLAN_SOURCE_DIR);

// Upstream files named by their public repository, allowed beside docs/*.md.
const QStringList kPublicUpstreamMarkdown = {
    "nccl-tests doc/PERFORMANCE.md",
    "NVIDIA Megatron-LM, docs/discussions/deepseek-v3-gb200-optimization/"
    "deepseek-v3-gb200-optimization.md",
    "NVIDIA-NeMo/Megatron-Bridge skills/nemo-mbridge-perf-memory-tuning/SKILL.md",
    "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md",
    "pytorch/torchtitan docs/performance.md",
    "stas00/ml-engineering, compute/accelerator/README.md",
    "tmoreau89/triton fork, python/triton_cublas_bench/PERFORMANCE_COMPARISON.md"};

// What a source must not say: a path or a note that does not ship with Paraplan.
// Returns the problem, or an empty string. `paths`: check Markdown paths too.
QString forbiddenIn(const QString& text, bool paths = true)
{
    // Vague attributions a reader cannot look up: no document, no author, no year.
    static const QStringList phrases = {"shared/",         "reference/",     "our notes",
                                        "our references",  "our sources",    "our presets",
                                        "the seed",        "planner-models", "commonly reported",
                                        "commonly quoted", "commonly cited", "widely quoted",
                                        "widely reported", "often quoted",   "reference table",
                                        "pyptx docs",      "well known",     "well-known"};
    for (const QString& phrase : phrases)
        if (text.contains(phrase, Qt::CaseInsensitive))
            return "names '" + phrase + "'";
    // A datasheet named by its product ("NVIDIA H100 Tensor Core GPU datasheet", "A100 PCIe
    // datasheet") gives its year: "datasheet (2022)". "the datasheet's" refers back to one.
    static const QRegularExpression datasheet("\\b[A-Z0-9][A-Za-z0-9-]*\\s+datasheet\\b(?!'s)");
    static const QRegularExpression year("^\\s*\\((?:19|20)\\d\\d\\b");
    for (auto it = datasheet.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        if (!year.match(text.mid(match.capturedEnd())).hasMatch())
            return "names '" + match.captured(0) + "' without its year";
    }
    // The origin label and the source saying it again: "assumption: A100: assumed: ...".
    static const QRegularExpression doubled("\\bassumption: (?:[^:;]*: )?assumed\\b",
                                            QRegularExpression::CaseInsensitiveOption);
    if (text.contains(doubled))
        return "labels an assumption twice";
    // A bare number "of" a rate: "about 1.6 of the datasheet's 2.039 TB/s" lacks its unit.
    static const QRegularExpression unitless("\\babout \\d+(?:\\.\\d+)? of [^,;]*\\d TB/s");
    if (text.contains(unitless))
        return "gives a rate without its unit";
    // A random-number seed (practice's --seed option) is not a reference to a note.
    static const QRegularExpression randomSeed("--seed\\b|the same seed gives",
                                               QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression seed("\\bseeds?\\b", QRegularExpression::CaseInsensitiveOption);
    if (QString(text).remove(randomSeed).contains(seed))
        return "names 'seed'";
    if (!paths)
        return {};
    // Markdown paths: docs/*.md of this repository (and the section it names exists), or an
    // allowed upstream file.
    static const QRegularExpression markdown("([A-Za-z0-9_./-]+\\.md)\\b(, '([^']+)')?");
    for (auto it = markdown.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        const QString path = match.captured(1);
        bool upstream = false;
        for (const QString& allowed : kPublicUpstreamMarkdown)
            upstream |= text.contains(allowed) && allowed.endsWith(path);
        if (upstream)
            continue;
        if (!path.startsWith("docs/") || !QFile::exists(kSourceDir + "/" + path))
            return "names '" + path + "', not a document of docs/";
        if (match.hasCaptured(3)) {
            QFile file(kSourceDir + "/" + path);
            if (!file.open(QIODevice::ReadOnly))
                return "cannot read " + path;
            const QString doc = QString::fromUtf8(file.readAll());
            const QRegularExpression heading("^#+ .*" +
                                                 QRegularExpression::escape(match.captured(3)),
                                             QRegularExpression::MultilineOption);
            if (!doc.contains(heading))
                return "names section '" + match.captured(3) + "' that " + path + " lacks";
        }
    }
    return {};
}

void collectJsonStrings(const QJsonValue& value, const QString& where, QStringList* out)
{
    if (value.isString()) {
        out->append(where + ": " + value.toString());
    } else if (value.isArray()) {
        const QJsonArray array = value.toArray();
        for (qsizetype i = 0; i < array.size(); ++i)
            collectJsonStrings(array[i], where + "[" + QString::number(i) + "]", out);
    } else if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it)
            collectJsonStrings(it.value(), where + "." + it.key(), out);
    }
}

void collectDerivation(const Derivation& d, QStringList* out)
{
    auto add = [&](const std::string& what, const std::string& text) {
        out->append(QString::fromStdString(d.title + " / " + what + ": " + text));
    };
    add("title", d.title);
    for (const std::string& input : d.inputs)
        add("input", input);
    for (const DerivationSymbol& s : d.symbols)
        add("symbol " + s.symbol, s.meaning);
    for (const DerivationStep& step : d.steps) {
        add(step.label, step.label);
        add(step.label + " formula", step.formula);
        add(step.label + " substitution", step.substitution);
        add(step.label + " result", step.result);
        add(step.label + " source", step.source);
    }
    for (const std::string& note : d.notes)
        add("note", note);
    for (const Derivation& part : d.parts)
        collectDerivation(part, out);
}

void collectSourced(const QString& what, const Sourced& figure, QStringList* out)
{
    out->append(what + ": " + QString::fromStdString(describeSource(figure)));
}

// Every string the engine emits for a plan: the derivation, the headline, the provenance.
QStringList planStrings(const Plan& plan, const StepCost& cost)
{
    QStringList out;
    collectDerivation(derivePlan(plan, cost), &out);
    for (const HeadlineFigure& figure : headlineFigures(plan, cost))
        out.append("headline " + QString::fromStdString(figure.label + ": " + figure.detail));
    out.append("model source: " + QString::fromStdString(plan.model.source));
    out.append("cluster source: " + QString::fromStdString(plan.cluster.source));
    if (const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id))
        out.append("gpu source: " + QString::fromStdString(gpu->source));
    const NodeSpec& n = plan.cluster.node;
    for (const Sourced* s :
         {&n.nvlink_link_GBps, &n.pcie_GBps, &n.host_link_GBps, &n.nics_count_source, &n.nic_GBps,
          &n.nvlink_ring_efficiency, &n.nvls_efficiency, &n.pcie_efficiency, &n.nic_efficiency})
        collectSourced("node figure", *s, &out);
    collectSourced("spine", plan.cluster.network.spine_oversubscription, &out);
    const TorusSpec& t = plan.cluster.torus;
    for (const Sourced* s : {&t.link_GBps, &t.efficiency, &t.hop_latency_us})
        collectSourced("torus figure", *s, &out);
    const EngineFigures& f = plan.figures;
    for (const Sourced* s :
         {&f.gemm_peak_fraction, &f.hbm_fraction, &f.attention_fraction, &f.attention_bwd_fraction,
          &f.comm_sm_share, &f.gpu_spread, &f.grad_bytes, &f.optimizer_step_bytes,
          &f.dp_bucket_bytes, &f.overlap_fraction, &f.host_launch_s, &f.kernel_gap_s,
          &f.graph_kernel_gap_s})
        collectSourced("engine figure", *s, &out);
    collectSourced("attention forward", cost.assumptions.attention_fwd_figure, &out);
    collectSourced("attention backward", cost.assumptions.attention_bwd_figure, &out);
    for (const std::string& warning : cost.warnings)
        out.append("warning: " + QString::fromStdString(warning));
    return out;
}

Plan loadExample(const QString& file)
{
    Plan plan;
    std::vector<std::string> errors;
    if (!loadPlan(file.toStdString(), &plan, &errors, HardwareCatalog::bundled()))
        qFatal("cannot load %s: %s", qPrintable(file), errors.front().c_str());
    return plan;
}

QStringList examplePlans()
{
    QStringList files;
    for (const QString& name :
         QDir(kSourceDir + "/resources/examples").entryList({"*.json"}, QDir::Files))
        files << kSourceDir + "/resources/examples/" + name;
    return files;
}

// Every symbol a formula uses that the derivation does not define, as "symbol in 'label'".
QStringList undefinedSymbols(const Derivation& d)
{
    QStringList missing;
    for (const DerivationStep& step : d.steps)
        for (const std::string& symbol : formulaSymbols(step.formula))
            if (!d.symbol(symbol))
                missing << QString::fromStdString(symbol + " in '" + step.label + "'");
    for (const Derivation& part : d.parts)
        missing << undefinedSymbols(part);
    return missing;
}

// A step shown as a sum of terms: the terms add up to its value, each term is shown in the
// substitution, and the shown (rounded) terms add up to the shown result.
QString checkTerms(const DerivationStep& step)
{
    double sum = 0;
    double shownSum = 0;
    double shownMagnitude = 0;
    for (const DerivationTerm& term : step.terms) {
        sum += term.value;
        if (step.unit != "s")
            continue;
        const std::string text = units::formatSeconds(term.value);
        if (step.substitution.find(text) == std::string::npos)
            return QString::fromStdString("'" + step.label + "' does not show its term " +
                                          term.name + " (" + text + ")");
        // parseSeconds takes positive durations only: a term shown as "0 s" adds nothing.
        if (const std::optional<double> shown = units::parseSeconds(text))
            shownSum += *shown;
        shownMagnitude += std::abs(term.value);
    }
    if (std::abs(sum - step.value) > 1e-9 * std::max(1.0, std::abs(step.value)))
        return QString::fromStdString("'" + step.label + "': terms add up to " +
                                      std::to_string(sum) + ", not " + std::to_string(step.value));
    if (step.unit == "s") {
        const std::string shownResult = step.result.substr(0, step.result.find(" ("));
        const auto result = units::parseSeconds(shownResult);
        if (!result)
            return QString::fromStdString("'" + step.label + "': result '" + step.result +
                                          "' is not a time");
        // Three significant digits: each shown number is within 0.5% of its value.
        if (std::abs(shownSum - *result) > 0.005 * (shownMagnitude + *result) + 1e-12)
            return QString::fromStdString("'" + step.label + "': shown terms add up to " +
                                          units::formatSeconds(shownSum) + ", shown result " +
                                          step.result);
    }
    return {};
}

QStringList checkAllTerms(const Derivation& d)
{
    QStringList problems;
    for (const DerivationStep& step : d.steps)
        if (!step.terms.empty())
            if (const QString problem = checkTerms(step); !problem.isEmpty())
                problems << problem;
    return problems;
}

} // namespace

class TestSources : public QObject
{
    Q_OBJECT

private slots:
    void theCheckCatchesInternalSources()
    {
        QVERIFY(!forbiddenIn("see shared/reference/hardware-figures.md").isEmpty());
        QVERIFY(!forbiddenIn("collectives-and-measurement.md section 3").isEmpty());
        QVERIFY(!forbiddenIn("as in the seed (11.1.2)").isEmpty());
        QVERIFY(!forbiddenIn("the Seed often writes S").isEmpty());
        QVERIFY(!forbiddenIn("--seed N, as in the seed").isEmpty());
        QVERIFY(forbiddenIn("--seed N: the same seed gives the same order").isEmpty());
        QVERIFY(!forbiddenIn("~24 GB/s (ib_write_bw, as commonly reported)").isEmpty());
        QVERIFY(!forbiddenIn("no figure in our references").isEmpty());
        QVERIFY(!forbiddenIn("~340 GB/s, the figure commonly quoted for TPU v4").isEmpty());
        QVERIFY(!forbiddenIn("reference table gives ~2250 bf16 and 180-192 GB").isEmpty());
        QVERIFY(!forbiddenIn("B200 8192^3: 1610 of 1745, pyptx docs").isEmpty());
        // Datasheets give their year; a reference back to "the datasheet" needs none.
        QVERIFY(!forbiddenIn("NVIDIA H100 Tensor Core GPU datasheet, SXM column").isEmpty());
        QVERIFY(!forbiddenIn("NVIDIA A100 PCIe datasheet: NVLink Bridge").isEmpty());
        QVERIFY(!forbiddenIn("NVIDIA A100 datasheet (2021); H200 datasheet").isEmpty());
        QVERIFY(forbiddenIn("NVIDIA H100 Tensor Core GPU datasheet (2022), SXM column").isEmpty());
        QVERIFY(forbiddenIn("about 1.6 TB/s of the datasheet's 2.039 TB/s").isEmpty());
        QVERIFY(forbiddenIn("P = datasheet peak / slowest-GPU factor").isEmpty());
        // The origin said twice, a rate without its unit.
        QVERIFY(!forbiddenIn("assumption: NVIDIA A100 80GB: assumed: a copy").isEmpty());
        QVERIFY(!forbiddenIn("assumption: assumed equal to NDR's").isEmpty());
        QVERIFY(forbiddenIn("assumption: NVIDIA A100 80GB: a copy taken to reach").isEmpty());
        QVERIFY(!forbiddenIn("at about 1.6 of the datasheet's 2.039 TB/s").isEmpty());
        QVERIFY(!forbiddenIn("docs/nonexistent.md").isEmpty());
        QVERIFY(!forbiddenIn("(docs/engine.md, 'A section it lacks')").isEmpty());
        QVERIFY(forbiddenIn("DeepSeek-V2 (arXiv:2405.04434)").isEmpty());
        QVERIFY(forbiddenIn("formula: nccl-tests doc/PERFORMANCE.md definitions").isEmpty());
        QVERIFY2(forbiddenIn("assumed (docs/engine.md, 'Assumed figures')").isEmpty(),
                 qPrintable(forbiddenIn("assumed (docs/engine.md, 'Assumed figures')")));
    }

    void presetFilesCitePublicSources()
    {
        int strings = 0;
        for (const QString dir : {"hardware", "models", "examples"}) {
            const QDir folder(kSourceDir + "/resources/" + dir);
            for (const QString& name : folder.entryList({"*.json"}, QDir::Files)) {
                QFile file(folder.filePath(name));
                QVERIFY(file.open(QIODevice::ReadOnly));
                QJsonParseError error;
                const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
                QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(name));
                QStringList texts;
                collectJsonStrings(doc.isArray() ? QJsonValue(doc.array())
                                                 : QJsonValue(doc.object()),
                                   dir + "/" + name, &texts);
                for (const QString& text : texts) {
                    const QString problem = forbiddenIn(text);
                    QVERIFY2(problem.isEmpty(), qPrintable(text + " -- " + problem));
                }
                strings += texts.size();
            }
        }
        QVERIFY2(strings > 300, qPrintable(QString::number(strings)));
    }

    // Strings the examples do not reach (imports, measurements, calibration, the window's
    // notes): no string literal of core/, ui/ or app/ names an internal note.
    void noStringLiteralNamesAnInternalNote()
    {
        static const QRegularExpression literal("\"((?:[^\"\\\\]|\\\\.)*)\"");
        int literals = 0;
        for (const QString dir : {"core", "ui", "app"}) {
            QDirIterator it(kSourceDir + "/" + dir, {"*.cpp", "*.h"}, QDir::Files,
                            QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QString path = it.next();
                QFile file(path);
                QVERIFY(file.open(QIODevice::ReadOnly));
                const QStringList lines = QString::fromUtf8(file.readAll()).split('\n');
                for (qsizetype n = 0; n < lines.size(); ++n) {
                    const QString line = lines[n].trimmed();
                    if (line.startsWith("//") || line.startsWith("#include"))
                        continue;
                    for (auto m = literal.globalMatch(line); m.hasNext();) {
                        const QString text = m.next().captured(1);
                        const QString problem = forbiddenIn(text, false);
                        QVERIFY2(problem.isEmpty(), qPrintable(QString("%1:%2: %3 -- %4")
                                                                   .arg(path)
                                                                   .arg(n + 1)
                                                                   .arg(text, problem)));
                        ++literals;
                    }
                }
            }
        }
        QVERIFY2(literals > 2000, qPrintable(QString::number(literals)));
    }

    void everyStringOfTheExamplePlansCitesPublicSources()
    {
        const QStringList plans = examplePlans();
        QVERIFY(plans.size() >= 3);
        int checked = 0;
        for (const QString& file : plans) {
            const Plan base = loadExample(file);
            std::vector<Plan> variants = {base};
            // The same plan on every cluster preset: PCIe nodes, other fabrics, torus.
            for (const ClusterPresetInfo& info : clusterPresets()) {
                Plan other = base;
                std::string error;
                if (clusterFromPreset(info.id, {}, &other.cluster, &error,
                                      HardwareCatalog::bundled()))
                    variants.push_back(other);
            }
            for (const Plan& plan : variants) {
                const StepCost cost =
                    StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
                for (const QString& text : planStrings(plan, cost)) {
                    const QString problem = forbiddenIn(text);
                    QVERIFY2(problem.isEmpty(),
                             qPrintable(QFileInfo(file).fileName() + " on " +
                                        QString::fromStdString(plan.cluster.name) + ": " + text +
                                        " -- " + problem));
                    QVERIFY2(!text.contains("paraplan-cli walkthrough"), qPrintable(text));
                    ++checked;
                }
            }
        }
        QVERIFY(checked > 1000);
    }

    void formulaSymbolsAreFound()
    {
        const std::vector<std::string> symbols =
            formulaSymbols("6 B s [L W_a + L s a 2 d] + h^2 × sigma; 1F1B (p - 1) / v, algbw");
        const std::vector<std::string> expected = {"B", "s", "L",     "W_a", "a",
                                                   "d", "h", "sigma", "p",   "v"};
        QCOMPARE(symbols, expected);
        // A derivation that uses a symbol it does not define is caught.
        Derivation d;
        d.add("x", "t = S / B", "", "1 s", 1, "s");
        d.define("S", "bytes");
        QCOMPARE(undefinedSymbols(d), QStringList({"t in 'x'", "B in 'x'"}));
    }

    void everyFormulaSymbolIsDefined()
    {
        for (const QString& file : examplePlans()) {
            const Plan plan = loadExample(file);
            const StepCost cost =
                StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
            QVERIFY(cost.ok);
            const Derivation d = derivePlan(plan, cost);
            QVERIFY2(undefinedSymbols(d).isEmpty(),
                     qPrintable(file + ": " + undefinedSymbols(d).join("; ")));
            // Symbols an earlier version used without defining, and the collectives' S and n.
            // (Latent attention's weights have no KV-head count g.)
            for (const char* symbol : {"c", "g", "B", "s", "h", "P", "e", "H"})
                QVERIFY2(d.symbol(symbol) || (plan.model.isMla() && symbol == std::string("g")),
                         symbol);
            QVERIFY(!d.parts.empty());
            for (const Derivation& part : d.parts)
                QVERIFY(part.symbol("S"));
        }
        // Stand-alone collective derivations: flat link, cluster, torus, measured time.
        const CollectiveModel flat = CollectiveModel::flatLink(450, 2);
        const CollectiveRequest request{CollectiveOp::AllReduce, 1e9, 8, 1, Algorithm::Auto};
        QVERIFY(
            undefinedSymbols(deriveCollective(flat, request, flat.evaluate(request))).isEmpty());
        for (const ClusterPresetInfo& info : clusterPresets()) {
            ClusterSpec cluster;
            std::string error;
            QVERIFY2(clusterFromPreset(info.id, {}, &cluster, &error, HardwareCatalog::bundled()),
                     error.c_str());
            const CollectiveModel model(cluster);
            for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather}) {
                const CollectiveRequest r{
                    op, 1e9, static_cast<int>(std::min<long long>(16, cluster.totalGpus())), 1,
                    Algorithm::Auto};
                const Derivation d = deriveCollective(model, r, model.evaluate(r));
                QVERIFY2(undefinedSymbols(d).isEmpty(),
                         qPrintable(QString::fromStdString(info.id) + ": " +
                                    undefinedSymbols(d).join("; ")));
            }
        }
        QVERIFY(
            undefinedSymbols(deriveMeasuredBandwidth(CollectiveOp::ReduceScatter, 4e8, 4, 4.3e-3))
                .isEmpty());
    }

    // Every model preset and the Hugging Face configs of the test data (MoE, latent
    // attention, biases) on the first example's layout: symbols defined, sums adding up, no
    // internal source.
    void everyModelDerivesCleanly()
    {
        const Plan base =
            loadExample(kSourceDir + "/resources/examples/llama3-70b-dgx-h100.paraplan.json");
        std::vector<ModelSpec> models;
        for (const ModelPresetInfo& info : modelPresets()) {
            ModelSpec model;
            std::string error;
            QVERIFY2(modelFromPreset(info.id, &model, &error), error.c_str());
            models.push_back(model);
        }
        const QDir hf(QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/hf");
        for (const QString& name : hf.entryList({"*.json"}, QDir::Files)) {
            ModelSpec model;
            std::string error;
            if (loadHuggingFaceConfig(hf.filePath(name).toStdString(), &model, &error))
                models.push_back(model);
        }
        QVERIFY(models.size() >= 15);
        int derived = 0;
        for (const ModelSpec& model : models) {
            Plan plan = base;
            plan.model = model;
            plan.parallel.tp = 8;
            plan.parallel.pp = 1;
            plan.parallel.dp = 16;
            plan.parallel.zero = 3;
            plan.parallel.interleave = 1;
            plan.parallel.global_batch = 64;
            plan.training.seq_len = 2048;
            const StepCost cost =
                StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
            const Derivation d = derivePlan(plan, cost);
            const QString name = QString::fromStdString(model.name);
            QVERIFY2(undefinedSymbols(d).isEmpty(),
                     qPrintable(name + ": " + undefinedSymbols(d).join("; ")));
            QVERIFY2(checkAllTerms(d).isEmpty(),
                     qPrintable(name + ": " + checkAllTerms(d).join("; ")));
            for (const QString& text : planStrings(plan, cost))
                QVERIFY2(forbiddenIn(text).isEmpty(), qPrintable(name + ": " + text));
            if (!cost.ok)
                qInfo("%s: %s", qPrintable(name), cost.issues.front().message.c_str());
            if (cost.ok) {
                ++derived;
                const auto flops = std::find_if(d.steps.begin(), d.steps.end(), [](auto& s) {
                    return s.label == "Model FLOPs per step";
                });
                QVERIFY(flops != d.steps.end());
                QCOMPARE(flops->value, cost.metrics.model_flops_per_step);
            }
        }
        QVERIFY2(derived >= 8, qPrintable(QString::number(derived)));
    }

    void gemmStepsShowTheirArithmetic()
    {
        for (const QString& file : examplePlans()) {
            const Plan plan = loadExample(file);
            const StepCost cost =
                StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
            const Derivation d = derivePlan(plan, cost);
            QVERIFY2(checkAllTerms(d).isEmpty(), qPrintable(checkAllTerms(d).join("; ")));

            // The layer's GEMM time is the sum of its GEMMs, each a roofline of its shown
            // compute, operand and output terms; the layer step shows compute and memory.
            // The layer shown: an MoE layer where most layers have experts.
            const bool moe = plan.model.isMoe() && 2 * plan.model.moeLayers() >= plan.model.layers;
            const LayerCompute& l = moe ? cost.moe_layer : cost.dense_layer;
            QVERIFY(l.gemm_count >= 3);
            double sum = 0;
            for (size_t i = 0; i < l.gemm_count; ++i) {
                const GemmTiming& g = l.gemms[i];
                const double roofline =
                    g.slowdown *
                    (std::max(g.compute_s, g.operands_s + 0.5 * g.output_s) + 0.5 * g.output_s);
                QVERIFY(std::abs(roofline - g.time_s) <= 1e-12 * g.time_s);
                sum += g.time_s;
                const auto step = std::find_if(d.steps.begin(), d.steps.end(), [&](auto& s) {
                    const std::string head = std::string("GEMM ") + g.name;
                    const std::string tail = ", forward, one micro-batch";
                    return s.label.rfind(head, 0) == 0 &&
                           s.label.size() >= head.size() + tail.size() &&
                           s.label.compare(s.label.size() - tail.size(), tail.size(), tail) == 0 &&
                           (s.label.size() == head.size() + tail.size() ||
                            s.label[head.size()] == ' ');
                });
                QVERIFY2(step != d.steps.end(), g.name);
                QCOMPARE(step->value, g.time_s);
                for (double shown : {g.compute_s, g.operands_s, g.output_s})
                    QVERIFY2(step->substitution.find(units::formatSeconds(shown)) !=
                                 std::string::npos,
                             step->substitution.c_str());
            }
            QVERIFY(std::abs(sum - l.gemm_forward_s) <= 1e-9 * l.gemm_forward_s);
            const auto layer = std::find_if(d.steps.begin(), d.steps.end(), [&](auto& s) {
                return s.label == std::string(moe ? "One MoE layer" : "One layer") +
                                      ", one micro-batch, forward: GEMMs";
            });
            QVERIFY(layer != d.steps.end());
            QCOMPARE(layer->terms.size(), size_t(2));
            QCOMPARE(layer->value, l.gemm_forward_s);
            QVERIFY(layer->substitution.find("compute") != std::string::npos);
            QVERIFY(layer->substitution.find("above the compute") != std::string::npos);
        }
        // A step whose shown terms do not add up is caught.
        DerivationStep wrong;
        wrong.label = "wrong";
        wrong.unit = "s";
        wrong.value = 3.95e-3;
        wrong.result = "3.95 ms";
        wrong.substitution = "3.50 ms";
        wrong.terms = {{"compute", 3.5e-3}};
        QVERIFY(!checkTerms(wrong).isEmpty());
        wrong.terms.push_back({"memory", 0.45e-3});
        wrong.substitution = "3.50 ms + 450 us";
        QVERIFY2(checkTerms(wrong).isEmpty(), qPrintable(checkTerms(wrong)));
    }

    void timeToTrainAndCostAreDerived()
    {
        const Plan plan =
            loadExample(kSourceDir + "/resources/examples/llama3-70b-dgx-h100.paraplan.json");
        const StepCost cost = StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
        const Derivation d = derivePlan(plan, cost);
        auto anchored = [&](const std::string& anchor) -> const DerivationStep* {
            for (const DerivationStep& step : d.steps)
                if (stepAnchor(step) == anchor)
                    return &step;
            return nullptr;
        };
        // The headline figures link to steps that exist.
        for (const HeadlineFigure& figure : headlineFigures(plan, cost)) {
            QVERIFY2(!figure.anchor.empty(), figure.key.c_str());
            QVERIFY2(anchored(figure.anchor), figure.anchor.c_str());
        }
        const DerivationStep* time = anchored("time-to-train");
        QVERIFY(time);
        QCOMPARE(time->value, cost.metrics.time_to_train_s);
        QCOMPARE(time->value, plan.training.train_tokens / cost.metrics.tokens_per_s);
        const DerivationStep* price = anchored("cost");
        QVERIFY(price);
        QCOMPARE(price->value, cost.metrics.cost_usd);
        QVERIFY(std::abs(price->value - cost.metrics.gpu_hours * plan.training.gpu_hour_usd) <
                1e-6 * price->value);
        QVERIFY(price->source.find("training.gpu_hour_usd") != std::string::npos);
        // Without a token budget neither is derived, and a note says why.
        Plan noBudget = plan;
        noBudget.training.train_tokens = 0;
        const StepCost plain =
            StepEngine(noBudget.cluster, HardwareCatalog::bundled()).evaluate(noBudget);
        const Derivation without = derivePlan(noBudget, plain);
        for (const DerivationStep& step : without.steps)
            QVERIFY(stepAnchor(step) != "time-to-train" && stepAnchor(step) != "cost");
        QVERIFY(std::any_of(without.notes.begin(), without.notes.end(), [](const auto& n) {
            return n.find("training.train_tokens") != std::string::npos;
        }));
    }

    void collectivesAreEmbedded()
    {
        const Plan plan =
            loadExample(kSourceDir + "/resources/examples/llama3-70b-dgx-h100.paraplan.json");
        const StepCost cost = StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
        const Derivation d = derivePlan(plan, cost);
        QCOMPARE(d.parts.size(), cost.collectives.size());
        for (size_t i = 0; i < d.parts.size(); ++i) {
            QCOMPARE(d.parts[i].anchor, "collective-" + std::to_string(i));
            // The part derives the very call the step costs.
            const auto time = std::find_if(d.parts[i].steps.begin(), d.parts[i].steps.end(),
                                           [](auto& s) { return s.label == "Time"; });
            QVERIFY(time != d.parts[i].steps.end());
            QCOMPARE(time->value, cost.collectives[i].call.time_s);
        }
        const std::string text = d.toText();
        QVERIFY(text.find("Collective 1, tp") != std::string::npos);
        QVERIFY(text.find("Bus bandwidth") != std::string::npos);
        const QJsonObject json =
            QJsonDocument::fromJson(QByteArray::fromStdString(d.toJson())).object();
        QCOMPARE(json["parts"].toArray().size(), qsizetype(d.parts.size()));
        QVERIFY(json["symbols"].toArray().size() > 10);
    }
};

QTEST_MAIN(TestSources)
#include "tst_sources.moc"
