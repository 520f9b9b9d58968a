#include "reportwriter.h"

#include "summary.h"

#include "clusterio.h"
#include "clusterview.h"
#include "costjson.h"
#include "derivationhtml.h"
#include "hardware.h"
#include "paraplan_version.h"
#include "plots.h"
#include "stepwalkthrough.h"
#include "units.h"

#include <qcustomplot.h>

#include <QAbstractTextDocumentLayout>
#include <QDateTime>
#include <QPainter>
#include <QPdfWriter>
#include <QPicture>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextObjectInterface>

#include <cmath>

namespace paraplan::ui {
namespace {

constexpr int kPictureObject = QTextFormat::UserObject + 1;
constexpr int kPictureProperty = 1;
constexpr int kPictureWidthProperty = 2; // share of the text width

// Draws a QPicture inside the document: the plots stay vector graphics in the PDF.
class PictureObject : public QObject, public QTextObjectInterface
{
    Q_OBJECT
    Q_INTERFACES(QTextObjectInterface)

public:
    QSizeF intrinsicSize(QTextDocument* document, int, const QTextFormat& format) override
    {
        const QPicture picture = format.property(kPictureProperty).value<QPicture>();
        const double share = format.property(kPictureWidthProperty).toDouble();
        const double width = document->pageSize().width() * (share > 0 ? share : 1.0) - 4;
        const QRect bounds = picture.boundingRect();
        const double height = bounds.width() > 0 ? width * bounds.height() / bounds.width() : 0;
        return {width, height};
    }
    void drawObject(QPainter* painter, const QRectF& rect, QTextDocument*, int,
                    const QTextFormat& format) override
    {
        const QPicture picture = format.property(kPictureProperty).value<QPicture>();
        const QRect bounds = picture.boundingRect();
        if (bounds.isEmpty())
            return;
        // A plot sets its own clip while it draws, which would lift the page's: draw only
        // on the page the layout put the object on.
        if (painter->hasClipping() && !painter->clipBoundingRect().contains(rect.center()))
            return;
        painter->save();
        painter->translate(rect.topLeft());
        painter->scale(rect.width() / bounds.width(), rect.height() / bounds.height());
        // Playing a picture onto a device of another resolution scales it by the ratio of
        // the two; the rect already is in device units, so undo that.
        const double dpi = painter->device()->logicalDpiX();
        if (dpi > 0)
            painter->scale(picture.logicalDpiX() / dpi, picture.logicalDpiY() / dpi);
        painter->translate(-bounds.topLeft());
        painter->drawPicture(0, 0, picture);
        painter->restore();
    }
};

QString esc(const std::string& text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}
QString seconds(double s)
{
    return QString::fromStdString(units::formatSeconds(s));
}
QString gib(double bytes)
{
    return QString::number(units::toGiB(bytes), 'f', 2);
}

QPicture plotPicture(PlotView* plot, int width, int height)
{
    plot->resize(width, height);
    plot->plot()->resize(width, height);
    plot->plot()->replot(QCustomPlot::rpImmediateRefresh);
    QPicture picture;
    QCPPainter painter;
    painter.begin(&picture);
    plot->plot()->toPainter(&painter, width, height);
    painter.end();
    return picture;
}

constexpr auto kNewPage = QTextFormat::PageBreak_AlwaysBefore; // a heading that starts a page

class Builder
{
public:
    explicit Builder(QTextDocument* document) : m_document(document), m_cursor(document) {}

    void html(const QString& text) { m_cursor.insertHtml(text); }
    void heading(const QString& title, bool newPage = false)
    {
        m_cursor.insertBlock();
        QTextBlockFormat block;
        block.setTopMargin(14);
        block.setBottomMargin(6);
        block.setPageBreakPolicy(newPage ? kNewPage : QTextFormat::PageBreak_Auto);
        m_cursor.setBlockFormat(block);
        QTextCharFormat format;
        format.setFontPointSize(14);
        format.setFontWeight(QFont::Bold);
        format.setForeground(QColor(11, 60, 93));
        m_cursor.insertText(title, format);
        m_headingBlocks << m_cursor.block().blockNumber();
        m_cursor.insertBlock(QTextBlockFormat(), QTextCharFormat());
        m_titles << title;
    }
    void paragraph(const QString& htmlText)
    {
        m_cursor.insertBlock(QTextBlockFormat(), QTextCharFormat());
        m_cursor.insertHtml(htmlText);
    }
    void picture(const QPicture& picture, double share = 1.0)
    {
        m_cursor.insertBlock();
        QTextCharFormat format;
        format.setObjectType(kPictureObject);
        format.setProperty(kPictureProperty, QVariant::fromValue(picture));
        format.setProperty(kPictureWidthProperty, share);
        m_cursor.insertText(QString(QChar::ObjectReplacementCharacter), format);
    }
    // A table whose header row repeats on every page it spans.
    void table(const QStringList& header, const QList<QStringList>& rows,
               const QList<int>& rightAligned = {})
    {
        m_cursor.insertBlock();
        QTextTableFormat format;
        format.setHeaderRowCount(1);
        format.setCellPadding(3);
        format.setCellSpacing(0);
        format.setBorder(0.5);
        format.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
        format.setBorderBrush(QColor(180, 180, 180));
        format.setWidth(QTextLength(QTextLength::PercentageLength, 100));
        QTextTable* table = m_cursor.insertTable(static_cast<int>(rows.size()) + 1,
                                                 static_cast<int>(header.size()), format);
        QTextCharFormat headerFormat;
        headerFormat.setFontWeight(QFont::Bold);
        headerFormat.setFontPointSize(8.5);
        QTextCharFormat cellFormat;
        cellFormat.setFontPointSize(8.5);
        for (int c = 0; c < header.size(); ++c) {
            QTextTableCell cell = table->cellAt(0, c);
            QTextCharFormat background = cell.format();
            background.setBackground(QColor(230, 236, 242));
            cell.setFormat(background);
            cell.firstCursorPosition().insertText(header[c], headerFormat);
        }
        for (int r = 0; r < rows.size(); ++r) {
            for (int c = 0; c < header.size() && c < rows[r].size(); ++c) {
                QTextCursor cursor = table->cellAt(r + 1, c).firstCursorPosition();
                if (rightAligned.contains(c)) {
                    QTextBlockFormat block = cursor.blockFormat();
                    block.setAlignment(Qt::AlignRight);
                    cursor.setBlockFormat(block);
                }
                cursor.insertText(rows[r][c], cellFormat);
            }
        }
        m_cursor.movePosition(QTextCursor::End);
    }
    QStringList titles() const { return m_titles; }
    /// Keeps each heading on the page of what follows it: a heading whose first content
    /// lands on the next page starts that page instead. Repeats until the layout settles.
    void keepHeadingsWithContent()
    {
        QAbstractTextDocumentLayout* layout = m_document->documentLayout();
        const double pageHeight = m_document->pageSize().height();
        for (int pass = 0; pass < 8; ++pass) {
            bool moved = false;
            for (int number : m_headingBlocks) {
                QTextBlock heading = m_document->findBlockByNumber(number);
                if (heading.blockFormat().pageBreakPolicy() & QTextFormat::PageBreak_AlwaysBefore)
                    continue;
                QTextBlock next = heading.next();
                while (next.isValid() && next.length() <= 1)
                    next = next.next();
                if (!next.isValid())
                    continue;
                const int headingPage = int(layout->blockBoundingRect(heading).top() / pageHeight);
                const int contentPage = int(layout->blockBoundingRect(next).bottom() / pageHeight);
                if (contentPage > headingPage) {
                    QTextCursor cursor(heading);
                    QTextBlockFormat format = heading.blockFormat();
                    format.setPageBreakPolicy(QTextFormat::PageBreak_AlwaysBefore);
                    cursor.setBlockFormat(format);
                    moved = true;
                    break; // everything after it moved: measure again
                }
            }
            if (!moved)
                return;
        }
    }

    /// Moves each paragraph that a page break would split to the next page whole.
    void keepParagraphsWhole();

private:
    QList<int> m_headingBlocks;
    QTextDocument* m_document;
    QTextCursor m_cursor;
    QStringList m_titles;
};

/// Moves each paragraph that a page break would split to the next page whole. The
/// layout draws a block whole on every page it touches and clips it there, so the text of
/// a split paragraph would be in the PDF twice (text extraction ignores the clip).
/// Paragraphs inside tables (their rows break on their own) and paragraphs taller than
/// half a page are left to split.
void Builder::keepParagraphsWhole()
{
    QAbstractTextDocumentLayout* layout = m_document->documentLayout();
    const double pageHeight = m_document->pageSize().height();
    for (int pass = 0; pass < 200; ++pass) {
        bool moved = false;
        for (QTextBlock block = m_document->begin(); block.isValid(); block = block.next()) {
            if (QTextCursor(block).currentTable())
                continue;
            const QRectF rect = layout->blockBoundingRect(block);
            if (rect.height() <= 0 || rect.height() > pageHeight / 2)
                continue;
            const int top = int(rect.top() / pageHeight);
            const int bottom = int((rect.bottom() - 1) / pageHeight);
            if (top == bottom)
                continue;
            QTextBlockFormat format = block.blockFormat();
            if (format.pageBreakPolicy() & QTextFormat::PageBreak_AlwaysBefore)
                continue;
            format.setPageBreakPolicy(QTextFormat::PageBreak_AlwaysBefore);
            QTextCursor(block).setBlockFormat(format);
            moved = true;
            break; // everything after it moved: measure again
        }
        if (!moved)
            return;
    }
}

// The report's sections in order: buildReport writes these headings and sectionTitles lists
// them (the tests read the PDF back against that list).
enum Section
{
    Headline,
    Cluster,
    Step,
    Collectives,
    Memory,
    Cliffs,
    Comparison,
    Derivation,
    Provenance,
};
constexpr const char* kSectionTitles[] = {
    "Headline figures", "Cluster and placement",     "Step time",
    "Collectives",      "Memory per pipeline stage", "Bandwidth cliffs",
    "Comparison",       "Worked derivation",         "Assumptions and provenance",
};

QStringList provenanceRow(const QString& what, const Sourced& figure, const QString& unit = {})
{
    return {what, QString::fromStdString(units::formatNumber(figure.value, 4)) + unit,
            originName(figure.origin), QString::fromStdString(figure.source)};
}

// A size in bytes the way a reader checks it against its source: "25 MiB (26.2 MB)".
QStringList provenanceBytesRow(const QString& what, const Sourced& figure)
{
    const double mib = figure.value / (1024.0 * 1024.0);
    QString value = QString::fromStdString(units::formatBytes(figure.value));
    if (mib >= 1 && std::abs(mib - std::round(mib)) < 1e-9)
        value = QString("%1 MiB (%2)").arg(std::round(mib), 0, 'f', 0).arg(value);
    return {what, value, originName(figure.origin), QString::fromStdString(figure.source)};
}

void titleBlock(Builder& b, const PlanResults& r)
{
    const Plan& plan = r.plan;
    const ParallelLayout& p = plan.parallel;
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id);
    b.html(QString("<p style='font-size:20pt; color:#0b3c5d'><b>%1</b></p>")
               .arg(QString::fromStdString(plan.name.empty() ? "Plan report" : plan.name)
                        .toHtmlEscaped()));
    b.paragraph(
        QString("<table cellpadding='2'>"
                "<tr><td><b>Model</b></td><td>%1 (%2B parameters)</td></tr>"
                "<tr><td><b>Cluster</b></td><td>%3: %4 GPUs (%5)</td></tr>"
                "<tr><td><b>Layout</b></td><td>TP %6, PP %7, DP %8, CP %9, EP %10, ZeRO %11%12, "
                "recompute %13, interleave %14; micro-batch %15, global batch %16, sequence %17, "
                "%18</td></tr>"
                "<tr><td><b>Date</b></td><td>%19, Paraplan %20</td></tr></table>")
            .arg(esc(plan.model.name))
            .arg(countParameters(plan.model).total / 1e9, 0, 'f', 1)
            .arg(esc(plan.cluster.name))
            .arg(plan.cluster.totalGpus())
            .arg(gpu ? esc(gpu->name) : QString())
            .arg(p.tp)
            .arg(p.pp)
            .arg(p.dp)
            .arg(p.cp)
            .arg(p.ep)
            .arg(p.zero)
            .arg(p.sequence_parallel ? ", sequence parallel" : "")
            .arg(recomputeName(p.recompute))
            .arg(p.interleave)
            .arg(p.micro_batch)
            .arg(p.global_batch)
            .arg(plan.training.seq_len)
            .arg(dtypeName(plan.training.dtype))
            .arg(QDateTime::currentDateTime().toString("yyyy-MM-dd HH:mm"))
            .arg(PARAPLAN_VERSION));
}

void assumptionsAndProvenance(Builder& b, const Plan& plan, const StepCost& cost)
{
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id);
    // The provenance table is the report's appendix: it starts a page of its own (its rows
    // are an HTML table, which keepHeadingsWithContent cannot measure the first row of).
    b.heading(kSectionTitles[Provenance], true);
    QList<QStringList> rows;
    rows.append({"Model " + QString::fromStdString(plan.model.name), "", "preset or import",
                 QString::fromStdString(plan.model.source)});
    if (gpu) {
        rows.append({"GPU " + QString::fromStdString(gpu->name),
                     QString("%1 TFLOP/s %2")
                         .arg(gpu->peakTflops(plan.training.dtype))
                         .arg(dtypeName(plan.training.dtype)),
                     "preset", QString::fromStdString(gpu->source)});
    }
    const NodeSpec& n = plan.cluster.node;
    rows.append({"Cluster " + QString::fromStdString(plan.cluster.name), "", "preset or file",
                 QString::fromStdString(clusterSource(plan.cluster))});
    if (!plan.cluster.is_torus) {
        if (n.fabric != NodeFabric::PCIe)
            rows.append(
                provenanceRow("NVLink per link, per direction", n.nvlink_link_GBps, " GB/s"));
        rows.append(provenanceRow("PCIe per GPU, per direction", n.pcie_GBps, " GB/s"));
        rows.append(provenanceRow("NIC per port, per direction", n.nic_GBps, " GB/s"));
        rows.append(provenanceRow("NVLink ring efficiency", n.nvlink_ring_efficiency));
        if (n.in_switch_reduction)
            rows.append(provenanceRow("NVLS efficiency", n.nvls_efficiency));
        rows.append(provenanceRow("PCIe efficiency", n.pcie_efficiency));
        rows.append(provenanceRow("NIC efficiency", n.nic_efficiency));
        rows.append(provenanceRow("Spine oversubscription",
                                  plan.cluster.network.spine_oversubscription, ":1"));
    } else {
        rows.append(
            provenanceRow("ICI per link, per direction", plan.cluster.torus.link_GBps, " GB/s"));
        rows.append(provenanceRow("ICI efficiency", plan.cluster.torus.efficiency));
        rows.append(provenanceRow("ICI hop latency", plan.cluster.torus.hop_latency_us, " us"));
    }
    const EngineFigures& f = plan.figures;
    rows.append(provenanceRow("GEMM share of dense peak (large shapes)", f.gemm_peak_fraction));
    // The GPU preset's HBM fraction, or the plan's override or measurement: shown once.
    rows.append(provenanceRow("HBM achievable fraction", f.hbm_fraction));
    const AttentionKernel attention = cost.assumptions.attention;
    if (attention != AttentionKernel::Unfused) {
        rows.append(provenanceRow(
            QString("Attention forward share of peak (%1)").arg(attentionKernelName(attention)),
            cost.assumptions.attention_fwd_figure));
        rows.append(provenanceRow(
            QString("Attention backward share of peak (%1)").arg(attentionKernelName(attention)),
            cost.assumptions.attention_bwd_figure));
    }
    rows.append(provenanceRow("NCCL SM share while overlapping", f.comm_sm_share));
    rows.append(provenanceRow("GPU speed spread (slowest sets the pace)", f.gpu_spread));
    rows.append(provenanceRow("Gradient bytes per parameter", f.grad_bytes, " B"));
    rows.append(
        provenanceRow("Optimizer step traffic per parameter", f.optimizer_step_bytes, " B"));
    rows.append(provenanceBytesRow("DP bucket", f.dp_bucket_bytes));
    rows.append(provenanceRow("Share of hideable DP traffic hidden", f.overlap_fraction));
    rows.append(provenanceRow("Caching allocator's reserve over its peak", f.allocator_reserve));
    Sourced runtimeMiB = f.runtime_reserve_bytes;
    runtimeMiB.value /= units::kMiB;
    rows.append(provenanceRow("Memory outside the allocator", runtimeMiB, " MiB"));
    for (const PlanMeasurement& m : plan.measured)
        rows.append({QString::fromStdString(m.figure) + " (measured)",
                     QString("%1 (assumed %2)").arg(m.value, 0, 'f', 3).arg(m.assumed, 0, 'f', 3),
                     "measurement", QString::fromStdString(m.run + "; " + m.why)});
    b.table({"Figure", "Value", "Origin", "Source"}, rows);
    b.paragraph(
        "<b>What the model does not cover.</b> Jitter between ranks beyond a fixed spread of "
        "GPU speeds, sustained power and thermal limits of a full node beyond the kernels' "
        "published figures, expert load imbalance (routing is taken as balanced), failures "
        "and restarts, data loading and checkpoints, CPU launch overhead, fragmentation "
        "beyond the allocator-reserve figure, gradient compression, offloading, and clusters "
        "whose nodes differ.");
}

void comparisonSection(Builder& b, const std::vector<ComparedPlan>& comparison,
                       const QPicture& comparisonPicture)
{
    if (!comparison.empty()) {
        b.heading(kSectionTitles[Comparison]);
        b.paragraph(QString("%1 plans pinned for comparison on the same model, cluster and "
                            "global batch, each evaluated by the same engine.")
                        .arg(comparison.size()));
        QStringList header = {"Figure"};
        for (const ComparedPlan& p : comparison)
            header << p.label + "\n" + comparedText(p);
        auto row = [&](const QString& name, auto value) {
            QStringList cells = {name};
            for (const ComparedPlan& p : comparison)
                cells << value(p.cost);
            return cells;
        };
        const QList<QStringList> rows = {
            row("Step time", [](const StepCost& c) { return seconds(c.step_time_s); }),
            row("Tokens/s",
                [](const StepCost& c) {
                    return QString::fromStdString(groupedNumber(c.metrics.tokens_per_s));
                }),
            row("MFU",
                [](const StepCost& c) {
                    return QString("%1%").arg(100 * c.metrics.mfu, 0, 'f', 1);
                }),
            row("Memory, fullest stage (GiB)",
                [](const StepCost& c) { return gib(c.max_stage_total_bytes); }),
            row("Memory per stage (GiB)", [](const StepCost& c) { return stageMemory(c); }),
            row("Pipeline bubble", [](const StepCost& c) { return seconds(c.breakdown.bubble_s); }),
            row("Exposed communication",
                [](const StepCost& c) {
                    const StepBreakdown& x = c.breakdown;
                    return seconds(x.exposedCommunication());
                }),
            row("Recompute", [](const StepCost& c) { return seconds(c.breakdown.recompute_s); })};
        QList<int> right;
        for (int i = 1; i < header.size(); ++i)
            right << i;
        b.table(header, rows, right);
        b.picture(comparisonPicture, 0.95);
    }
}

void buildReport(Builder& b, const PlanResults& r, const QPicture& cluster,
                 const QList<QPicture>& plots, const std::vector<ComparedPlan>& comparison,
                 const QPicture& comparisonPicture)
{
    const Plan& plan = r.plan;
    const StepCost& cost = r.cost;

    titleBlock(b, r);

    b.heading(kSectionTitles[Headline]);
    QList<QStringList> headline;
    for (const HeadlineFigure& figure : headlineFigures(plan, cost)) {
        QString label = QString::fromStdString(figure.label);
        label[0] = label[0].toUpper();
        headline.append({label, QString::fromStdString(figure.detail)});
    }
    b.table({"Figure", "Value"}, headline);
    for (const std::string& warning : cost.warnings)
        b.paragraph("<i>Note: " + esc(warning) + ".</i>");

    b.heading(kSectionTitles[Cluster]);
    b.picture(cluster, 0.9);
    b.paragraph(
        QString("GPUs coloured by their tensor-parallel group; TP innermost in the rank "
                "order%1.")
            .arg(cost.tp_within_node ? ", each group inside one node" : "; TP groups span nodes"));

    b.heading(kSectionTitles[Step]);
    b.picture(plots[0], 0.95);
    const StepBreakdown& s = cost.breakdown;
    QList<QStringList> parts;
    for (const BreakdownComponent& component : kBreakdownComponents) {
        const double value = s.*component.field;
        if (value > 0)
            parts.append({component.label, seconds(value),
                          QString("%1%").arg(100 * value / cost.step_time_s, 0, 'f', 1)});
    }
    b.table({"Component", "Time per step", "Share"}, parts, {1, 2});

    b.heading(kSectionTitles[Collectives]);
    QList<QStringList> collectives;
    for (const CollectiveCost& c : cost.collectives)
        collectives.append({QString(c.group).toUpper(), collectiveOpName(c.call.op),
                            QString::fromStdString(units::formatBytes(c.call.bytes)),
                            QString::number(c.call.ranks), tierName(c.call.bottleneck),
                            seconds(c.call.time_s),
                            QString::fromStdString(units::formatNumber(c.calls_per_step, 4)),
                            seconds(c.total_s), seconds(c.exposed_s)});
    b.table({"Group", "Op", "Bytes (S)", "Ranks", "Tier", "Each", "Calls", "Total", "Exposed"},
            collectives, {2, 3, 5, 6, 7, 8});

    // The table before the plot: a heading kept with a tall plot would leave most of a page
    // blank whenever the plot does not fit below the collectives.
    b.heading(kSectionTitles[Memory]);
    QList<QStringList> stages;
    for (const StageCost& st : cost.stages)
        stages.append({QString::number(st.stage), QString::number(st.layers), gib(st.weights_bytes),
                       gib(st.grads_bytes), gib(st.optimizer_bytes), gib(st.activations_bytes),
                       gib(st.buffers_bytes), gib(st.total_bytes), st.fits ? "yes" : "no"});
    b.table({"Stage", "Layers", "Weights", "Gradients", "Optimizer", "Activations", "Buffers",
             "Total (GiB)", "Fits"},
            stages, {0, 1, 2, 3, 4, 5, 6, 7});
    // The verdict in words, and where the plan does not fit the changes that would make it.
    b.paragraph(QString::fromStdString(memoryVerdictText(cost, r.analysis.memory_fixes))
                    .toHtmlEscaped()
                    .replace("\n", "<br>"));
    b.picture(plots[1], 0.95);

    b.heading(kSectionTitles[Cliffs]);
    for (int i = 2; i < plots.size(); ++i)
        b.picture(plots[i], 0.85);

    comparisonSection(b, comparison, comparisonPicture);

    b.heading(kSectionTitles[Derivation]);
    b.paragraph(derivationHtml(derivePlan(plan, cost), false, true));

    assumptionsAndProvenance(b, plan, cost);
}

} // namespace

QStringList ReportWriter::sectionTitles(const PlanResults&, const ReportOptions& options)
{
    QStringList titles;
    for (int section = Headline; section <= Provenance; ++section) {
        if (section != Comparison || !options.comparison.empty())
            titles << kSectionTitles[section];
    }
    return titles;
}

bool ReportWriter::writePdf(const PlanResults& results, QIODevice* device,
                            const ReportOptions& options, QString* error, int* pages)
{
    // The same plots the window shows, drawn once more into vector pictures.
    BreakdownPlot breakdown;
    MemoryPlot memory;
    TpSweepPlot tp;
    BandwidthPlot bandwidth;
    ScalingPlot scaling;
    WhatIfPlot whatIf;
    breakdown.setResults(results);
    memory.setResults(results);
    tp.setResults(results);
    bandwidth.setResults(results);
    scaling.setResults(results);
    whatIf.setResults(results);
    const QList<QPicture> plots = {
        plotPicture(&breakdown, 760, 300), plotPicture(&memory, 760, 360),
        plotPicture(&tp, 700, 380),        plotPicture(&bandwidth, 700, 400),
        plotPicture(&scaling, 700, 380),   plotPicture(&whatIf, 700, 340)};
    ClusterView clusterView;
    auto shared = std::make_shared<PlanResults>(results);
    clusterView.setResults(shared);
    clusterView.resize(760, 420);
    QPicture clusterPicture;
    {
        QPainter painter(&clusterPicture);
        clusterView.render(&painter);
    }

    QPdfWriter writer(device);
    writer.setPageSize(QPageSize(options.paper));
    writer.setPageMargins(QMarginsF(16, 20, 16, 20), QPageLayout::Millimeter);
    writer.setResolution(300);
    writer.setTitle(
        QString::fromStdString(results.plan.name.empty() ? "Paraplan report" : results.plan.name));
    writer.setCreator(QString("Paraplan %1").arg(PARAPLAN_VERSION));
    const QRect page = writer.pageLayout().paintRectPixels(writer.resolution());

    QTextDocument document;
    document.documentLayout()->setPaintDevice(&writer);
    QFont font("DejaVu Sans", 9);
    document.setDefaultFont(font);
    document.setDocumentMargin(0);
    const double footer = 60;
    // Space between the header rule and the text and between the text and the footer, so
    // that no line of text sits against either (text extraction merges such lines).
    const double headerGap = 30;
    document.setPageSize(QSizeF(page.width(), page.height() - 2 * footer - 2 * headerGap));
    auto* handler = new PictureObject;
    handler->setParent(&document);
    document.documentLayout()->registerHandler(kPictureObject, handler);
    Builder builder(&document);
    QPicture comparisonPicture;
    if (!options.comparison.empty()) {
        CompareBreakdownPlot compare;
        QStringList labels;
        std::vector<StepBreakdown> breakdowns;
        for (const ComparedPlan& p : options.comparison) {
            labels << p.label + "\n" + comparedText(p);
            breakdowns.push_back(p.cost.breakdown);
        }
        compare.setPlans(labels, breakdowns);
        comparisonPicture =
            plotPicture(&compare, 760, 160 + 60 * static_cast<int>(options.comparison.size()));
    }
    buildReport(builder, results, clusterPicture, plots, options.comparison, comparisonPicture);
    builder.keepHeadingsWithContent();
    builder.keepParagraphsWhole();

    QPainter painter;
    if (!painter.begin(&writer)) {
        *error = "cannot start the PDF: the output is not writable";
        return false;
    }
    const int count = document.pageCount();
    const QString title =
        QString::fromStdString(results.plan.name.empty() ? "Plan report" : results.plan.name);
    QFont small("DejaVu Sans", 7);
    for (int i = 0; i < count; ++i) {
        if (i > 0)
            writer.newPage();
        painter.setFont(small);
        painter.setPen(QColor(110, 110, 110));
        painter.drawText(QRectF(0, 0, page.width(), footer - 10), Qt::AlignLeft | Qt::AlignBottom,
                         title);
        painter.drawText(QRectF(0, 0, page.width(), footer - 10), Qt::AlignRight | Qt::AlignBottom,
                         "Paraplan plan report");
        painter.drawLine(QPointF(0, footer - 4), QPointF(page.width(), footer - 4));
        painter.drawText(QRectF(0, page.height() - footer + 10, page.width(), footer - 10),
                         Qt::AlignRight | Qt::AlignTop,
                         QString("page %1 of %2").arg(i + 1).arg(count));
        painter.drawText(QRectF(0, page.height() - footer + 10, page.width(), footer - 10),
                         Qt::AlignLeft | Qt::AlignTop,
                         QString("Paraplan %1, %2")
                             .arg(PARAPLAN_VERSION)
                             .arg(QDateTime::currentDateTime().toString("yyyy-MM-dd")));
        painter.save();
        painter.translate(0, footer + headerGap - i * document.pageSize().height());
        QAbstractTextDocumentLayout::PaintContext context;
        context.clip =
            QRectF(0, i * document.pageSize().height(), page.width(), document.pageSize().height());
        painter.setClipRect(context.clip);
        document.documentLayout()->draw(&painter, context);
        painter.restore();
    }
    painter.end();
    if (pages)
        *pages = count;
    return true;
}

QString ReportWriter::collectivesCsv(const StepCost& cost)
{
    return QString::fromStdString(stepCollectivesCsv(cost));
}

QString ReportWriter::memoryCsv(const StepCost& cost)
{
    return QString::fromStdString(stepMemoryCsv(cost));
}

} // namespace paraplan::ui

#include "reportwriter.moc"
