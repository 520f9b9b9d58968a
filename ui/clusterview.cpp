#include "clusterview.h"

#include "summary.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace paraplan::ui {
namespace {

QColor groupColour(int group)
{
    // Golden-angle hues keep neighbouring groups apart.
    const int hue = static_cast<int>(std::fmod(group * 137.508, 360.0));
    return QColor::fromHsv(hue, 150 + (group % 3) * 35, 225 - (group % 2) * 40);
}

// The first form that fits `room` (the full one, then shorter ones), else the shortest cut
// with an ellipsis: a label never runs past its node's box.
QString fittedLabel(const QStringList& forms, const QFontMetricsF& metrics, double room)
{
    for (const QString& form : forms)
        if (metrics.horizontalAdvance(form) <= room)
            return form;
    return metrics.elidedText(forms.last(), Qt::ElideRight, room);
}

} // namespace

ClusterView::ClusterView(QWidget* parent) : QWidget(parent)
{
    setMinimumSize(320, 240);
    setAutoFillBackground(true);
}

void ClusterView::setResults(std::shared_ptr<const PlanResults> results)
{
    m_results = std::move(results);
    update();
}

void ClusterView::setColourBy(ColourBy colourBy)
{
    m_colourBy = colourBy;
    update();
}

int ClusterView::groupOf(long long gpu) const
{
    if (!m_results)
        return 0;
    const ParallelLayout& p = m_results->plan.parallel;
    const GroupStrides s = groupStrides(p);
    const long long tpCoord = (gpu / s.tp) % p.tp;
    const long long ppCoord = (gpu / s.pp) % p.pp;
    const long long dpCoord = (gpu / s.dp) % p.dp;
    switch (m_colourBy) {
    case ColourBy::TensorGroup:
        // Every GPU with the same coordinates outside TP is in the same TP group.
        return static_cast<int>((gpu - tpCoord * s.tp) / std::max(1, p.tp) % 100000);
    case ColourBy::PipelineStage:
        return static_cast<int>(ppCoord);
    case ColourBy::DataReplica:
        return static_cast<int>(dpCoord);
    }
    return 0;
}

void ClusterView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(rect(), palette().base());
    m_labels.clear();
    if (!m_results) {
        painter.drawText(rect(), Qt::AlignCenter, tr("No valid plan yet"));
        return;
    }
    const ClusterSpec& cluster = m_results->plan.cluster;
    const int gpn = cluster.gpusPerNode();
    const long long nodes =
        cluster.is_torus ? cluster.totalGpus() / std::max(1, gpn) : cluster.nodes;
    const int perRack = cluster.network.nodes_per_rack > 0 ? cluster.network.nodes_per_rack
                                                           : static_cast<int>(nodes);
    // Torus chips are drawn as nodes of one chip each, in rows of the x dimension.
    const int shownNodes = static_cast<int>(std::min<long long>(nodes, 64));
    const int columns =
        cluster.is_torus
            ? std::min(cluster.torus.dims[0], 16)
            : std::max(1, std::min(8, static_cast<int>(std::ceil(std::sqrt(shownNodes * 1.6)))));
    const int rows = (shownNodes + columns - 1) / columns;
    const QRectF area = QRectF(rect()).adjusted(12, 30, -12, -40);
    const double cellW = area.width() / columns;
    const double cellH = area.height() / std::max(1, rows);
    const int gpuCols = gpn <= 4 ? gpn : (gpn + 1) / 2;
    const int gpuRows = (gpn + gpuCols - 1) / gpuCols;

    QFont small = font();
    small.setPointSizeF(std::max(6.0, std::min(9.0, cellH / 8)));
    painter.setFont(small);
    const QFontMetricsF metrics(small, this);
    static const char* kModes[] = {"TP group", "pipeline stage", "DP replica"};
    painter.setPen(palette().text().color());
    // A rack-scale NVLink domain (NVL72: 18 trays of 4) is named: the NVLink boundary is the
    // domain, not the node.
    const int domain = cluster.nvlinkDomainGpus();
    const QString domainText =
        domain > gpn ? tr(", NVLink domains of %1 GPUs (%2 nodes)").arg(domain).arg(domain / gpn)
                     : QString();
    const auto header = [&](const QString& name) {
        return tr("%1: %2 nodes x %3 GPUs%5, coloured by %4")
            .arg(name)
            .arg(QString::fromStdString(groupedNumber(nodes)))
            .arg(gpn)
            .arg(kModes[static_cast<int>(m_colourBy)])
            .arg(domainText);
    };
    // A long preset name ("... (18 compute trays of 4 GPUs, ...)") gives up its parenthesis
    // before the counts and the domain are cut.
    const double headerWidth = width() - 24;
    QString name = QString::fromStdString(cluster.name);
    QString text = header(name);
    if (metrics.horizontalAdvance(text) > headerWidth && name.contains(" ("))
        text = header(name.left(name.indexOf(" (")));
    painter.drawText(QRectF(12, 4, headerWidth, 22), Qt::AlignLeft | Qt::AlignVCenter,
                     metrics.elidedText(text, Qt::ElideRight, headerWidth));

    for (int n = 0; n < shownNodes; ++n) {
        const int row = n / columns;
        const int col = n % columns;
        const QRectF cell(area.left() + col * cellW, area.top() + row * cellH, cellW, cellH);
        const QRectF box = cell.adjusted(3, 3, -3, -3);
        const bool newRack =
            !cluster.is_torus && perRack > 0 && n % perRack == 0 && nodes > perRack;
        painter.setPen(
            QPen(newRack ? QColor(150, 110, 30) : QColor(150, 150, 150), newRack ? 2 : 1));
        painter.setBrush(QColor(245, 245, 245));
        painter.drawRoundedRect(box, 4, 4);
        const QRectF gpuArea = box.adjusted(4, 4 + small.pointSizeF() * 1.6, -4, -4);
        painter.setPen(palette().text().color());
        const QRectF labelBox(box.left() + 4, box.top() + 2, box.width() - 8,
                              small.pointSizeF() * 1.6);
        const QStringList forms =
            cluster.is_torus
                ? QStringList{tr("chip %1").arg(n)}
                : (newRack ? QStringList{tr("node %1 (rack %2)").arg(n).arg(n / perRack),
                                         tr("node %1 (r%2)").arg(n).arg(n / perRack)}
                           : QStringList{tr("node %1").arg(n)});
        const QString label = fittedLabel(forms, metrics, labelBox.width());
        m_labels.push_back({label, metrics.horizontalAdvance(label), labelBox.width()});
        painter.drawText(labelBox, Qt::AlignLeft | Qt::AlignVCenter, label);
        const double gw = gpuArea.width() / gpuCols;
        const double gh = gpuArea.height() / gpuRows;
        for (int g = 0; g < gpn; ++g) {
            const long long gpu = static_cast<long long>(n) * gpn + g;
            const QRectF square(gpuArea.left() + (g % gpuCols) * gw,
                                gpuArea.top() + (g / gpuCols) * gh, gw, gh);
            painter.setPen(QPen(QColor(60, 60, 60), 0.8));
            painter.setBrush(groupColour(groupOf(gpu)));
            painter.drawRect(square.adjusted(1.5, 1.5, -1.5, -1.5));
            if (gw > 22 && gh > 14) {
                painter.setPen(Qt::black);
                painter.drawText(square, Qt::AlignCenter, QString::number(groupOf(gpu)));
            }
        }
    }
    painter.setPen(palette().text().color());
    QString footer = tr("Numbers are the group index. TP = %1, PP = %2, DP = %3, CP = %4.")
                         .arg(m_results->plan.parallel.tp)
                         .arg(m_results->plan.parallel.pp)
                         .arg(m_results->plan.parallel.dp)
                         .arg(m_results->plan.parallel.cp);
    if (nodes > shownNodes)
        footer += tr(" Showing %1 of %2 nodes; the rest repeat the pattern.")
                      .arg(shownNodes)
                      .arg(QString::fromStdString(groupedNumber(nodes)));
    if (!m_results->cost.tp_within_node)
        footer += tr(" TP groups span nodes.");
    const bool shortRack = std::any_of(m_labels.begin(), m_labels.end(), [](const NodeLabel& l) {
        return l.text.contains(QLatin1String(" (r")) && !l.text.contains(QLatin1String("rack"));
    });
    if (shortRack)
        footer += tr(" A brown border starts a rack (r1: rack 1).");
    painter.drawText(QRectF(12, height() - 36, width() - 24, 32),
                     Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, footer);
}

} // namespace paraplan::ui
