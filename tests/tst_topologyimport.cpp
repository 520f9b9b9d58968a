// Importing what machines print: nvidia-smi topo -m and NCCL topology XML, with fixtures
// written from the format descriptions (collectives-and-measurement.md section 5).
#include "clusterio.h"
#include "collectivemodel.h"
#include "hardware.h"
#include "testdata.h"
#include "topologyimport.h"

#include <QTest>

#include <cstring>

using namespace paraplan;

namespace {

std::string fixture(const QString& name)
{
    return test::dataPath("topology/" + name).toStdString();
}

double busbw(const ClusterSpec& cluster, int ranks)
{
    CollectiveRequest request;
    request.bytes = 4e9;
    request.ranks = ranks;
    request.algorithm = Algorithm::Ring;
    const CollectiveResult r = CollectiveModel(cluster).evaluate(request);
    return r.ok ? r.busbw_Bps : -1;
}

} // namespace

class TestTopologyImport : public QObject
{
    Q_OBJECT

private slots:
    void fixturesGiveTheExpectedNode_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("gpu"); // given by the user, or "" to infer
        QTest::addColumn<QString>("fabric");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<int>("nics");
        QTest::addColumn<int>("linksPerGpu"); // NVSwitch only
        QTest::addColumn<int>("chips");       // NVSwitch only
        QTest::addColumn<int>("meshPairs");
        QTest::addColumn<int>("perHostLink");
        QTest::addColumn<double>("nicGBps");
        QTest::newRow("DGX H100, nvidia-smi") << "dgx-h100.topo.txt"
                                              << ""
                                              << "nvswitch" << 8 << 8 << 18 << 4 << 0 << 8 << 0.0;
        QTest::newRow("DGX A100, nvidia-smi (mlx5 columns)")
            << "dgx-a100.topo.txt"
            << ""
            << "nvswitch" << 8 << 8 << 12 << 6 << 0 << 8 << 0.0;
        QTest::newRow("PCIe box, nvidia-smi") << "pcie-box.topo.txt"
                                              << "h100-pcie-80gb"
                                              << "pcie" << 8 << 2 << 0 << 0 << 0 << 2 << 0.0;
        QTest::newRow("NVLink mesh, nvidia-smi")
            << "nvlink-mesh.topo.txt"
            << "a100-pcie-80gb"
            << "nvlink-mesh" << 8 << 2 << 0 << 0 << 4 << 1 << 0.0;
        QTest::newRow("DGX H100, NCCL XML") << "dgx-h100.nccl.xml"
                                            << ""
                                            << "nvswitch" << 8 << 8 << 18 << 4 << 0 << 1 << 50.0;
        QTest::newRow("DGX A100, NCCL XML") << "dgx-a100.nccl.xml"
                                            << ""
                                            << "nvswitch" << 8 << 8 << 12 << 6 << 0 << 1 << 25.0;
        QTest::newRow("NVLink mesh, NCCL XML")
            << "nvlink-mesh.nccl.xml"
            << "a100-pcie-80gb"
            << "nvlink-mesh" << 8 << 0 << 0 << 0 << 4 << 1 << 0.0;
        QTest::newRow("cloud VM, partial XML") << "cloud-partial.nccl.xml"
                                               << "a100-pcie-80gb"
                                               << "pcie" << 4 << 1 << 0 << 0 << 0 << 1 << 0.0;
    }
    void fixturesGiveTheExpectedNode()
    {
        QFETCH(QString, file);
        QFETCH(QString, gpu);
        QFETCH(QString, fabric);
        QFETCH(int, gpus);
        QFETCH(int, nics);
        QFETCH(int, linksPerGpu);
        QFETCH(int, chips);
        QFETCH(int, meshPairs);
        QFETCH(int, perHostLink);
        QFETCH(double, nicGBps);
        TopologyImportOptions options;
        options.gpu_id = gpu.toStdString();
        TopologyImport result;
        std::string error;
        QVERIFY2(
            importTopologyFile(fixture(file), options, &result, &error, HardwareCatalog::bundled()),
            error.c_str());
        const NodeSpec& node = result.cluster.node;
        QCOMPARE(QString(nodeFabricName(node.fabric)), fabric);
        QCOMPARE(node.gpus, gpus);
        QCOMPARE(result.nics, nics);
        QCOMPARE(node.nics, nics);
        if (fabric == "nvswitch") {
            QCOMPARE(node.nvlinkLinksPerGpu(), linksPerGpu);
            QCOMPARE(static_cast<int>(node.switch_links_per_gpu.size()), chips);
        }
        QCOMPARE(static_cast<int>(node.nvlink_pairs.size()), meshPairs);
        if (fabric != "nvswitch")
            QCOMPARE(node.gpus_per_host_link, perHostLink);
        QCOMPARE(node.nic_GBps.value, nicGBps);
        QVERIFY(!result.notes.empty());
        QVERIFY(validateCluster(result.cluster, HardwareCatalog::bundled()).empty());
    }

    void importedNodesCostLikeThePresets()
    {
        // An imported DGX H100 has the NVLink bandwidth of the dgx-h100 preset.
        TopologyImport imported;
        std::string error;
        QVERIFY(importTopologyFile(fixture("dgx-h100.nccl.xml"), {}, &imported, &error,
                                   HardwareCatalog::bundled()));
        QCOMPARE(imported.cluster.node.switch_links_per_gpu, (std::vector<int>{5, 5, 4, 4}));
        ClusterSpec preset;
        QVERIFY(clusterFromPreset("dgx-h100", {}, &preset, &error, HardwareCatalog::bundled()));
        QCOMPARE(busbw(imported.cluster, 8), busbw(preset, 8));
        QCOMPARE(imported.cluster.gpu_id, std::string("h100-sxm5-80gb"));
        // The mesh: TP = 2 on a bridged pair runs at NVLink speed (12 x 25 x 0.767 = 230 GB/s),
        // four GPUs go over PCIe (two rings, one each way, at 24 GB/s: 48 GB/s).
        TopologyImportOptions options;
        options.gpu_id = "a100-pcie-80gb";
        TopologyImport mesh;
        QVERIFY(importTopologyFile(fixture("nvlink-mesh.topo.txt"), options, &mesh, &error,
                                   HardwareCatalog::bundled()));
        QVERIFY(qAbs(busbw(mesh.cluster, 2) / 230.1e9 - 1) < 0.01);
        QVERIFY(qAbs(busbw(mesh.cluster, 4) / 48e9 - 1) < 0.01);
        // A PCIe box: two GPUs per switch share its uplink.
        options.gpu_id = "h100-pcie-80gb";
        TopologyImport box;
        QVERIFY(importTopologyFile(fixture("pcie-box.topo.txt"), options, &box, &error,
                                   HardwareCatalog::bundled()));
        QVERIFY(busbw(box.cluster, 8) < busbw(box.cluster, 2));
    }

    void provenanceSaysWhereFiguresCameFrom()
    {
        TopologyImport result;
        std::string error;
        QVERIFY(importTopologyFile(fixture("dgx-h100.topo.txt"), {}, &result, &error,
                                   HardwareCatalog::bundled()));
        bool nv18 = false;
        for (const std::string& note : result.notes)
            nv18 |= QString::fromStdString(note).contains("NV18");
        QVERIFY(nv18);
        QCOMPARE(result.cluster.source, std::string("imported from nvidia-smi topo -m"));
    }

    void whatTheFileCannotTellIsAskedFor()
    {
        std::string error;
        TopologyImport result;
        // A PCIe box does not say which GPU it holds.
        QVERIFY(!importTopologyFile(fixture("pcie-box.topo.txt"), {}, &result, &error,
                                    HardwareCatalog::bundled()));
        QVERIFY2(QString::fromStdString(error).contains("--gpu"), error.c_str());
        // nvidia-smi does not say the NIC speed, needed for several nodes.
        TopologyImportOptions options;
        options.nodes = 16;
        QVERIFY(!importTopologyFile(fixture("dgx-h100.topo.txt"), options, &result, &error,
                                    HardwareCatalog::bundled()));
        QVERIFY2(QString::fromStdString(error).contains("--nic"), error.c_str());
        options.nic_id = "ib-ndr";
        options.nodes_per_rack = 8;
        options.spine_oversubscription = 2;
        QVERIFY2(importTopologyFile(fixture("dgx-h100.topo.txt"), options, &result, &error,
                                    HardwareCatalog::bundled()),
                 error.c_str());
        QCOMPARE(result.cluster.nodes, 16);
        QCOMPARE(result.cluster.network.spine_oversubscription.value, 2.0);
        QCOMPARE(busbw(result.cluster, 128) > 0, true);
    }

    void badFilesGetAMessage_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("truncated nvidia-smi") << QString::fromStdString([] {
            QFile f(test::dataPath("topology/truncated.topo.txt"));
            f.open(QIODevice::ReadOnly);
            return f.readAll().toStdString();
        }()) << "truncated";
        QTest::newRow("truncated XML") << QString::fromStdString([] {
            QFile f(test::dataPath("topology/truncated.nccl.xml"));
            f.open(QIODevice::ReadOnly);
            return f.readAll().toStdString();
        }()) << "malformed XML";
        QTest::newRow("garbage") << "hello world\nthis is not a topology\n"
                                 << "no header row";
        QTest::newRow("unknown cell") << "\tGPU0\tGPU1\nGPU0\t X \tWARP\nGPU1\tWARP\t X \n"
                                      << "unknown cell 'WARP'";
        QTest::newRow("short row") << "\tGPU0\tGPU1\nGPU0\t X \nGPU1\tNV4\t X \n"
                                   << "truncated";
        QTest::newRow("xml without system") << "<topology><cpu/></topology>"
                                            << "no <system>";
        QTest::newRow("xml gpu outside pci")
            << "<system version=\"1\"><gpu dev=\"0\" sm=\"90\"/></system>"
            << "outside any <pci>";
        QTest::newRow("xml without gpus") << "<system version=\"1\"><cpu/></system>"
                                          << "no GPU";
        auto edited = [](const char* name, const char* from, const char* to) {
            QFile f(test::dataPath(QString("topology/") + name));
            f.open(QIODevice::ReadOnly);
            QString text = QString::fromUtf8(f.readAll());
            const int at = text.indexOf(from);
            return at < 0 ? QString("fixture lacks ") + from
                          : text.replace(at, static_cast<int>(strlen(from)), to);
        };
        // NV999999999999 overflows an int: it was read as 0, silently dropping the links.
        QTest::newRow("NVLink count beyond an int")
            << edited("dgx-h100.topo.txt", "NV18", "NV999999999999")
            << "cell 'NV999999999999' at row GPU0, column GPU1: the NVLink count of a GPU pair "
               "must be a whole number from 1 to 64 links (got 999,999,999,999)";
        QTest::newRow("NVLink count of 0") << edited("dgx-h100.topo.txt", "NV18", "NV0")
                                           << "must be a whole number from 1 to 64 links (got 0)";
        QTest::newRow("xml net speed of -1e308")
            << edited("dgx-h100.nccl.xml", "speed=\"400000\"", "speed=\"-1e308\"")
            << "speed must be a number above 0 up to 800,000,000 Mb/s (got -1e308)";
        QTest::newRow("xml net speed not a number")
            << edited("dgx-h100.nccl.xml", "speed=\"400000\"", "speed=\"fast\"") << "('fast')";
        QTest::newRow("xml nvlink count of 1e9")
            << edited("dgx-h100.nccl.xml", "count=\"", "count=\"1e9")
            << "count must be a whole number from 1 to 64 links";
        QTest::newRow("xml sm of 1e300") << edited("dgx-h100.nccl.xml", "sm=\"90\"", "sm=\"1e300\"")
                                         << "sm must be a whole number from 10 to 999";
        QTest::newRow("xml link_speed of 1e300")
            << edited("dgx-h100.nccl.xml", "link_speed=\"32.0", "link_speed=\"1e300")
            << "<pci> at line";
        QTest::newRow("xml nvlink outside gpu")
            << "<system version=\"1\"><nvlink target=\"x\" count=\"2\"/></system>"
            << "outside a <gpu>";
    }
    void badFilesGetAMessage()
    {
        QFETCH(QString, text);
        QFETCH(QString, messagePart);
        TopologyImportOptions options;
        options.gpu_id = "h100-sxm5-80gb";
        TopologyImport result;
        std::string error;
        const std::string input = text.toStdString();
        const bool ok =
            input.find('<') == 0
                ? importNcclTopologyXml(input, options, &result, &error, HardwareCatalog::bundled())
                : importNvidiaSmiTopology(input, options, &result, &error,
                                          HardwareCatalog::bundled());
        QVERIFY(!ok);
        QVERIFY2(QString::fromStdString(error).contains(messagePart), error.c_str());
    }

    void everyPrefixOfAFixtureIsSafe()
    {
        // Cut the files anywhere: a message or a result, never a crash.
        for (const char* name : {"dgx-h100.topo.txt", "dgx-h100.nccl.xml"}) {
            QFile file(test::dataPath(QString("topology/") + name));
            QVERIFY(file.open(QIODevice::ReadOnly));
            const std::string text = file.readAll().toStdString();
            for (size_t cut = 0; cut < text.size(); cut += 97) {
                TopologyImport result;
                std::string error;
                const std::string prefix = text.substr(0, cut);
                const bool ok = text[0] == '<'
                                    ? importNcclTopologyXml(prefix, {}, &result, &error,
                                                            HardwareCatalog::bundled())
                                    : importNvidiaSmiTopology(prefix, {}, &result, &error,
                                                              HardwareCatalog::bundled());
                QVERIFY(ok || !error.empty());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTopologyImport)
#include "tst_topologyimport.moc"
