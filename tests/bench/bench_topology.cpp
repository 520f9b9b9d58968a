// A full repaint of the topology editor at 16,384 GPUs (2,048 DGX H100 nodes in 64 racks):
// fitted to the window (racks collapse to boxes) and zoomed in on one rack (every GPU drawn).
// Target: at most 50 ms each. Run: QT_QPA_PLATFORM=offscreen build/bench/bench_topology
#include "topologyeditor.h"

#include <QGraphicsView>
#include <QImage>
#include <QPainter>
#include <QTest>

using namespace paraplan;
using namespace paraplan::ui;

class BenchTopology : public QObject
{
    Q_OBJECT

private:
    TopologyEditor m_editor;

private slots:
    void initTestCase()
    {
        m_editor.resize(1600, 900);
        m_editor.show();
        QString error;
        QVERIFY2(m_editor.generateFatTree("dgx-h100", 2048, 32, 2, &error), qPrintable(error));
        QCOMPARE(m_editor.document()->graph().gpuCount(), 16384LL);
    }

    void repaintWholeCluster()
    {
        m_editor.fitToWindow();
        QImage image(m_editor.view()->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        QBENCHMARK
        {
            QPainter painter(&image);
            m_editor.view()->render(&painter);
        }
    }

    void repaintOneRackZoomedIn()
    {
        const TopoRack& rack = m_editor.document()->graph().racks.front();
        m_editor.view()->resetTransform();
        m_editor.view()->centerOn(rack.x + 300, rack.y + 300);
        QImage image(m_editor.view()->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        QBENCHMARK
        {
            QPainter painter(&image);
            m_editor.view()->render(&painter);
        }
    }
};

QTEST_MAIN(BenchTopology)
#include "bench_topology.moc"
