// The hardware catalog and cluster presets: data files load, carry sources, validate, and
// cluster files round-trip and reject bad input with a message.
#include "clusterio.h"
#include "collectivemodel.h"
#include "hardware.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace paraplan;

class TestHardware : public QObject
{
    Q_OBJECT

private slots:
    void catalogHasRequiredGpus_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("bf16");
        QTest::addColumn<double>("hbmGiB");
        for (auto [id, bf16, hbm] : std::initializer_list<std::tuple<const char*, double, double>>{
                 {"a100-sxm4-40gb", 312, 40},
                 {"a100-sxm4-80gb", 312, 80},
                 {"a100-pcie-80gb", 312, 80},
                 {"h100-sxm5-80gb", 989, 80},
                 {"h100-pcie-80gb", 756, 80},
                 {"h200-sxm-141gb", 989, 141},
                 {"h200-nvl-141gb", 835.5, 141},
                 {"b200-hgx", 2250, 180},
                 {"b300-hgx", 2250, 288},
                 {"gb200-nvl72", 2500, 186},
                 {"gb300-nvl72", 2500, 288},
                 {"tpu-v4", 275, 32},
                 {"tpu-v5p", 459, 95}})
            QTest::newRow(id) << QString(id) << bf16 << hbm;
    }
    void catalogHasRequiredGpus()
    {
        QFETCH(QString, id);
        QFETCH(double, bf16);
        QFETCH(double, hbmGiB);
        const GpuSpec* gpu = HardwareCatalog::bundled().gpu(id.toStdString());
        QVERIFY(gpu);
        QCOMPARE(gpu->peakTflops(Dtype::BF16), bf16);
        QCOMPARE(gpu->hbm_GiB, hbmGiB);
        QVERIFY(gpu->hbm_GBps > 0);
        QVERIFY2(!gpu->source.empty(), "every preset names its source");
    }

    void fp8OnlyWhereItExists()
    {
        const HardwareCatalog& catalog = HardwareCatalog::bundled();
        QCOMPARE(catalog.gpu("a100-sxm4-80gb")->peakTflops(Dtype::FP8), 0.0);
        QCOMPARE(catalog.gpu("h100-sxm5-80gb")->peakTflops(Dtype::FP8), 1979.0);
        QCOMPARE(catalog.gpu("h100-sxm5-80gb")->peakTflops(Dtype::FP32), 67.0);
    }

    // The Blackwell and H200 NVL presets: dense figures (half the datasheets' sparse ones), HBM
    // bandwidth and TDP as their datasheets give them, and no FlashAttention-3 (Hopper only).
    void metaH100IsItsOwnPart()
    {
        // torchtitan's H100 runs: 96 GB HBM2e at 2.4 TB/s under a 500 W limit, with torchao's
        // achievable shares for that part (0.78 of peak at large shapes, 0.92 of the HBM) and a
        // peak between H100 SXM's and H100 NVL's, as torchtitan says.
        const GpuSpec* meta = HardwareCatalog::bundled().gpu("h100-sxm5-96gb-hbm2e");
        const GpuSpec* sxm = HardwareCatalog::bundled().gpu("h100-sxm5-80gb");
        QVERIFY(meta && sxm);
        QCOMPARE(meta->hbm_GBps, 2400.0);
        QCOMPARE(meta->tdp_w, 500.0);
        QCOMPARE(meta->hbm_achievable_fraction.value, 0.92);
        QVERIFY(!meta->kernels.gemm_best_of_search && sxm->kernels.gemm_best_of_search);
        QVERIFY(std::abs(meta->kernels.gemm_tflops - 0.78 * 912.25) < 0.1);
        QVERIFY(meta->source.find("torchtitan") != std::string::npos);
        // The backward's promoted-accumulation FP8 figure sits below the forward's.
        QVERIFY(meta->kernels.fp8_promoted_tflops > 0 &&
                meta->kernels.fp8_promoted_tflops < meta->kernels.fp8_gemm_tflops);
    }

    void blackwellAndNvlPresets_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("fp8");
        QTest::addColumn<double>("tf32");
        QTest::addColumn<double>("hbmGBps");
        QTest::addColumn<double>("tdp");
        QTest::addColumn<bool>("flash3");
        QTest::newRow("b200") << "b200-hgx" << 4500.0 << 1100.0 << 7700.0 << 1000.0 << false;
        QTest::newRow("b300") << "b300-hgx" << 4500.0 << 1125.0 << 8000.0 << 1100.0 << false;
        QTest::newRow("gb200") << "gb200-nvl72" << 5000.0 << 1250.0 << 8000.0 << 1200.0 << false;
        QTest::newRow("gb300") << "gb300-nvl72" << 5000.0 << 1250.0 << 8000.0 << 1400.0 << false;
        QTest::newRow("h200 nvl") << "h200-nvl-141gb" << 1670.5 << 417.5 << 4800.0 << 600.0 << true;
    }
    void blackwellAndNvlPresets()
    {
        QFETCH(QString, id);
        QFETCH(double, fp8);
        QFETCH(double, tf32);
        QFETCH(double, hbmGBps);
        QFETCH(double, tdp);
        QFETCH(bool, flash3);
        const GpuSpec* gpu = HardwareCatalog::bundled().gpu(id.toStdString());
        QVERIFY(gpu);
        QCOMPARE(gpu->peakTflops(Dtype::FP8), fp8);
        QCOMPARE(gpu->peakTflops(Dtype::TF32), tf32);
        // FP8 runs at twice the 16-bit rate (the datasheets round: H200 NVL 3,341 and 1,671).
        QVERIFY(std::fabs(gpu->peakTflops(Dtype::FP8) - 2 * gpu->peakTflops(Dtype::BF16)) <= 1);
        QCOMPARE(gpu->hbm_GBps, hbmGBps);
        QCOMPARE(gpu->tdp_w, tdp);
        QVERIFY2(gpu->source.find("spars") != std::string::npos,
                 "the source says the sparse datasheet figures were halved");
        QCOMPARE(gpu->kernels.attention[static_cast<size_t>(AttentionKernel::Flash3)].available,
                 flash3);
        const AttentionFigures& cudnn =
            gpu->kernels.attention[static_cast<size_t>(AttentionKernel::Cudnn)];
        QVERIFY(cudnn.available);
        // Blackwell's cuDNN attention comes from NVIDIA's cudnn-frontend benchmark results on
        // B200 (cuDNN 9.13.1) and GB200 (cuDNN 9.22), not from H100's shares.
        if (!flash3) {
            QVERIFY(cudnn.source.find("cudnn-frontend") != std::string::npos);
            QCOMPARE(cudnn.fwd, id.startsWith("gb") ? 0.702 : 0.703);
        }
        QCOMPARE(gpu->nvlink_generation, id.startsWith("h200") ? 4 : 5);
    }

    void interconnectsArePerDirection_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("perDirection");
        QTest::newRow("pcie gen3") << "pcie-gen3-x16" << 16.0;
        QTest::newRow("pcie gen4") << "pcie-gen4-x16" << 32.0;
        QTest::newRow("pcie gen5") << "pcie-gen5-x16" << 64.0;
        QTest::newRow("nvlink3 link") << "nvlink3" << 25.0;
        QTest::newRow("nvlink4 link") << "nvlink4" << 25.0;
        QTest::newRow("nvlink5 link") << "nvlink5" << 50.0;
        QTest::newRow("hdr") << "ib-hdr" << 25.0;
        QTest::newRow("ndr") << "ib-ndr" << 50.0;
        QTest::newRow("xdr") << "ib-xdr" << 100.0;
        QTest::newRow("roce 100") << "roce-100" << 12.5;
        QTest::newRow("roce 200") << "roce-200" << 25.0;
        QTest::newRow("roce 400") << "roce-400" << 50.0;
    }
    void interconnectsArePerDirection()
    {
        QFETCH(QString, id);
        QFETCH(double, perDirection);
        const InterconnectSpec* link = HardwareCatalog::bundled().interconnect(id.toStdString());
        QVERIFY(link);
        QCOMPARE(link->per_direction_GBps, perDirection);
        QCOMPARE(link->bidirectionalGBps(), 2 * perDirection);
        QVERIFY(!link->source.empty());
    }

    void everyInterconnectAndGpuHasASource()
    {
        for (const InterconnectSpec& link : HardwareCatalog::bundled().interconnects) {
            QVERIFY2(!link.source.empty(), link.id.c_str());
            if (link.achievable_fraction > 0)
                QVERIFY2(!link.achievable_source.empty(), link.id.c_str());
        }
        QVERIFY(HardwareCatalog::bundled().interconnect("nvswitch-gen3")->in_switch_reduction);
        QVERIFY(!HardwareCatalog::bundled().interconnect("nvswitch-gen2")->in_switch_reduction);
    }

    void everyClusterPresetLoads_data()
    {
        QTest::addColumn<QString>("id");
        for (const char* id : {"dgx-a100", "dgx-h100", "dgx-h200", "hgx-b200", "pcie-h100",
                               "a100-nvlink-mesh", "tpu-v4-pod", "gb200-nvl72", "gb300-nvl72"})
            QTest::newRow(id) << QString(id);
    }
    void everyClusterPresetLoads()
    {
        QFETCH(QString, id);
        ClusterSpec cluster;
        std::string error;
        QVERIFY2(
            clusterFromPreset(id.toStdString(), {}, &cluster, &error, HardwareCatalog::bundled()),
            error.c_str());
        QVERIFY(validateCluster(cluster, HardwareCatalog::bundled()).empty());
        QVERIFY(!cluster.source.empty());
        QVERIFY(cluster.totalGpus() >= 8);
        // Every preset must give a working collective model.
        const CollectiveModel model(cluster);
        CollectiveRequest request;
        request.bytes = 1e9;
        request.ranks = 8;
        const CollectiveResult result = model.evaluate(request);
        QVERIFY2(result.ok, result.error.c_str());
        QVERIFY(result.time_s > 0);
    }

    void presetOptionsApply()
    {
        ClusterOptions options;
        options.nodes = 64;
        options.nodes_per_rack = 16;
        options.spine_oversubscription = 2;
        ClusterSpec cluster;
        std::string error;
        QVERIFY(
            clusterFromPreset("dgx-h100", options, &cluster, &error, HardwareCatalog::bundled()));
        QCOMPARE(cluster.nodes, 64);
        QCOMPARE(cluster.totalGpus(), 512LL);
        QCOMPARE(cluster.network.nodes_per_rack, 16);
        QCOMPARE(cluster.network.spine_oversubscription.value, 2.0);
        QCOMPARE(cluster.network.spine_oversubscription.origin, Origin::UserEntry);
        QCOMPARE(cluster.node.nic_GBps.value, 50.0);
        QCOMPARE(cluster.node.nvlinkLinksPerGpu(), 18);
    }

    // A figure no document gives is labelled an assumption where it is used, and the presets'
    // spine ratio names where it comes from rather than the preset's id.
    void assumedLinkFiguresKeepTheirOrigin()
    {
        const HardwareCatalog& catalog = HardwareCatalog::bundled();
        QCOMPARE(catalog.interconnect("ici-v4")->origin, Origin::Assumption);
        QCOMPARE(catalog.interconnect("ib-hdr")->achievable_origin, Origin::Assumption);
        QCOMPARE(catalog.interconnect("ib-ndr")->achievable_origin, Origin::Preset);
        ClusterSpec a100;
        ClusterSpec tpu;
        std::string error;
        QVERIFY(clusterFromPreset("dgx-a100", {}, &a100, &error, catalog));
        QVERIFY(clusterFromPreset("tpu-v4-pod", {}, &tpu, &error, catalog));
        QCOMPARE(a100.node.nic_efficiency.origin, Origin::Assumption);
        QCOMPARE(tpu.torus.link_GBps.origin, Origin::Assumption);
        const std::string& spine = a100.network.spine_oversubscription.source;
        QVERIFY2(spine.find("non-blocking fat tree") != std::string::npos, spine.c_str());
        QVERIFY2(spine.find("preset ") == std::string::npos, spine.c_str());
    }

    void torusDimensions_data()
    {
        QTest::addColumn<int>("chips");
        QTest::addColumn<int>("x");
        QTest::addColumn<int>("y");
        QTest::addColumn<int>("z");
        QTest::newRow("full v4 pod") << 4096 << 16 << 16 << 16;
        QTest::newRow("1024") << 1024 << 8 << 8 << 16;
        QTest::newRow("64") << 64 << 4 << 4 << 4;
        QTest::newRow("8") << 8 << 2 << 2 << 2;
        QTest::newRow("odd factor") << 3072 << 12 << 16 << 16;
    }
    void torusDimensions()
    {
        QFETCH(int, chips);
        QFETCH(int, x);
        QFETCH(int, y);
        QFETCH(int, z);
        std::array<int, 3> dims{};
        QVERIFY(torusDimsForChips(chips, &dims));
        QCOMPARE(dims[0], x);
        QCOMPARE(dims[1], y);
        QCOMPARE(dims[2], z);
    }

    void torusWrapFollowsMultiplesOfFour()
    {
        ClusterOptions options;
        options.nodes = 128; // 4x4x8
        ClusterSpec cluster;
        std::string error;
        QVERIFY(
            clusterFromPreset("tpu-v4-pod", options, &cluster, &error, HardwareCatalog::bundled()));
        QVERIFY(cluster.is_torus);
        QCOMPARE(cluster.torus.dims, (std::array<int, 3>{4, 4, 8}));
        QCOMPARE(cluster.torus.wrap, (std::array<bool, 3>{true, true, true}));
        options.nodes = 32; // 2x4x4: the 2-long axis has no wrap-around
        QVERIFY(
            clusterFromPreset("tpu-v4-pod", options, &cluster, &error, HardwareCatalog::bundled()));
        QCOMPARE(cluster.torus.dims, (std::array<int, 3>{2, 4, 4}));
        QCOMPARE(cluster.torus.wrap, (std::array<bool, 3>{false, true, true}));
    }

    void clusterFileRoundTrip()
    {
        ClusterOptions options;
        options.nodes = 16;
        options.spine_oversubscription = 4;
        ClusterSpec original;
        std::string error;
        QVERIFY(
            clusterFromPreset("dgx-a100", options, &original, &error, HardwareCatalog::bundled()));
        original.what_if.nvswitch_chips_out = {2};
        QTemporaryDir dir;
        const std::string path = dir.filePath("cluster.json").toStdString();
        QVERIFY2(saveClusterFile(path, original, &error), error.c_str());
        ClusterSpec loaded;
        QVERIFY2(loadCluster(path, {}, &loaded, &error, HardwareCatalog::bundled()), error.c_str());
        QCOMPARE(loaded.nodes, 16);
        QCOMPARE(loaded.gpu_id, original.gpu_id);
        QCOMPARE(loaded.network.spine_oversubscription.value, 4.0);
        QCOMPARE(loaded.what_if.nvswitch_chips_out, std::vector<int>{2});
        QCOMPARE(loaded.node.switch_links_per_gpu, original.node.switch_links_per_gpu);
        // The same cluster costs the same collective.
        CollectiveRequest request;
        request.bytes = 4e9;
        request.ranks = 64;
        QCOMPARE(CollectiveModel(loaded).evaluate(request).time_s,
                 CollectiveModel(original).evaluate(request).time_s);
    }

    void presetWithOverridesFromJson()
    {
        std::vector<std::string> errors;
        ClusterSpec cluster;
        QVERIFY(clusterFromJsonText(
            R"({"preset": "dgx-h100", "nodes": 32, "node": {"nics": 2, "nic_GBps": 40}})", "test",
            {}, &cluster, &errors, HardwareCatalog::bundled()));
        QCOMPARE(cluster.node.nics, 2);
        QCOMPARE(cluster.node.nic_GBps.value, 40.0);
        QCOMPARE(cluster.node.nic_GBps.origin, Origin::UserEntry);
        QCOMPARE(cluster.node.nvlink_link_GBps.origin, Origin::Preset);
    }

    void badClusterFiles_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("not json") << "{nope"
                                  << "invalid JSON at line 1";
        QTest::newRow("array") << "[1, 2]"
                               << "top level must be a JSON object";
        QTest::newRow("truncated") << "{\"preset\": \"dgx-h100\", \"nodes\": "
                                   << "invalid JSON";
        QTest::newRow("unknown key") << R"({"preset": "dgx-h100", "nodez": 3})"
                                     << "nodez: unknown key";
        QTest::newRow("unknown preset") << R"({"preset": "dgx-z9"})"
                                        << "unknown cluster preset";
        QTest::newRow("unknown gpu") << R"({"gpu": "x1000", "node": {"gpus": 8}})"
                                     << "unknown GPU";
        QTest::newRow("no gpu") << R"({"node": {"gpus": 8}})"
                                << "needs either";
        QTest::newRow("zero nodes") << R"({"preset": "dgx-h100", "nodes": 0})"
                                    << "from 1 to 1,048,576 nodes (got 0)";
        QTest::newRow("huge nodes") << R"({"preset": "dgx-h100", "nodes": 100000000})"
                                    << "from 1 to 1,048,576 nodes (got 100,000,000)";
        QTest::newRow("2e9 NICs") << R"({"preset": "dgx-h100", "nodes": 2, "node": {"nics": 2e9}})"
                                  << "node.nics must be a whole number from 0 to 64 NICs";
        QTest::newRow("too many GPUs")
            << R"({"preset": "dgx-h100", "nodes": 1000000})"
            << "cluster GPUs (nodes x node.gpus) must be a whole number from 1 to 1,048,576";
        QTest::newRow("inf-like NIC")
            << R"({"preset": "dgx-h100", "nodes": 2, "node": {"nic_GBps": 1e308}})"
            << "node.nic_GBps must be a number from 0.001 to 100,000 GB/s";
        QTest::newRow("string nodes") << R"({"preset": "dgx-h100", "nodes": "8"})"
                                      << "must be a number";
        QTest::newRow("bad ratio")
            << R"({"preset": "dgx-h100", "network": {"spine_oversubscription": 0.5}})"
            << "at least 1";
        QTest::newRow("negative nic") << R"({"preset": "dgx-h100", "node": {"nic_GBps": -5}})"
                                      << "positive bandwidth";
        QTest::newRow("all switches out")
            << R"({"preset": "dgx-h100", "what_if": {"nvswitch_chips_out": [0,1,2,3]}})"
            << "every NVSwitch chip is out";
        QTest::newRow("bad chip")
            << R"({"preset": "dgx-h100", "what_if": {"nvswitch_chips_out": [7]}})"
            << "no NVSwitch chip 7";
        QTest::newRow("bad factor") << R"({"preset": "dgx-h100", "what_if": {"nic_factor": 2}})"
                                    << "(0, 1]";
        QTest::newRow("bad fabric") << R"({"preset": "dgx-h100", "node": {"fabric": "magic"}})"
                                    << "unknown fabric";
        QTest::newRow("bad pair")
            << R"({"preset": "a100-nvlink-mesh", "node": {"nvlink_pairs": [{"gpus": [0, 9], "links": 2}]}})"
            << "two different GPUs";
        // A given 0 was taken for "not given" and replaced by the default.
        QTest::newRow("nic efficiency 0")
            << R"({"preset": "dgx-h100", "node": {"nic_efficiency": {"value": 0}}})"
            << "node.nic_efficiency.value must be a number from 0.01 to 1.5 (got 0)";
        QTest::newRow("nvlink ring efficiency 0")
            << R"({"preset": "dgx-h100", "node": {"nvlink_ring_efficiency": {"value": 0}}})"
            << "node.nvlink_ring_efficiency.value must be a number from 0.01 to 1.5 (got 0)";
        QTest::newRow("efficiency 1e-300")
            << R"({"preset": "dgx-h100", "node": {"pcie_efficiency": 1e-300}})"
            << "node.pcie_efficiency must be a number from 0.01 to 1.5 (got 1e-300): the share "
               "of the line rate the link achieves, at least 1%";
        QTest::newRow("efficiency 2")
            << R"({"preset": "dgx-h100", "node": {"nvls_efficiency": 2}})"
            << "node.nvls_efficiency must be a number from 0.01 to 1.5 (got 2)";
        QTest::newRow("torus efficiency 0")
            << R"({"preset": "tpu-v4-pod", "torus": {"efficiency": 0}})"
            << "torus.efficiency must be a number from 0.01 to 1 (got 0)";
        // NVSwitch nodes were not checked at all.
        QTest::newRow("NVSwitch host link -1")
            << R"({"preset": "dgx-h100", "node": {"gpus_per_host_link": -1}})"
            << "node.gpus_per_host_link must be a whole number from 1 to 8 GPUs (got -1)";
        QTest::newRow("NVSwitch host link 0")
            << R"({"preset": "dgx-h100", "node": {"gpus_per_host_link": 0}})"
            << "node.gpus_per_host_link must be a whole number from 1 to 8 GPUs (got 0)";
        QTest::newRow("NVSwitch host link 1e9")
            << R"({"preset": "dgx-h100", "node": {"gpus_per_host_link": 1e9}})"
            << "gpus_per_host_link";
        QTest::newRow("NVSwitch host link 3 of 8")
            << R"({"preset": "dgx-h100", "node": {"gpus_per_host_link": 3}})"
            << "node.gpus_per_host_link must divide node.gpus (8; got 3)";
        QTest::newRow("torus mismatch")
            << R"({"preset": "tpu-v4-pod", "nodes": 100, "torus": {"dims": [4, 4, 4]}})"
            << "holds 64 chips";
    }
    void badClusterFiles()
    {
        QFETCH(QString, text);
        QFETCH(QString, messagePart);
        std::vector<std::string> errors;
        ClusterSpec cluster;
        QVERIFY(!clusterFromJsonText(text.toStdString(), "test", {}, &cluster, &errors,
                                     HardwareCatalog::bundled()));
        QVERIFY(!errors.empty());
        bool found = false;
        for (const std::string& error : errors)
            found |= QString::fromStdString(error).contains(messagePart);
        QVERIFY2(found, errors.empty() ? "no error" : errors.front().c_str());
    }

    void missingFileIsNamed()
    {
        ClusterSpec cluster;
        std::string error;
        QVERIFY(!loadCluster("/nonexistent/cluster.json", {}, &cluster, &error,
                             HardwareCatalog::bundled()));
        QVERIFY(QString::fromStdString(error).contains("neither a cluster preset"));
    }
};

QTEST_GUILESS_MAIN(TestHardware)
#include "tst_hardware.moc"
