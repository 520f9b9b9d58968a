// Every worked number of the seed chapter and interview question, reproduced through the
// core (tests/data/seed_examples.json), plus the seed's claims that are ratios or cluster
// behaviour. Where the seed's arithmetic does not follow from its own inputs, the test pins
// what the inputs give and says so.
#include "clusterio.h"
#include "collectivemodel.h"
#include "dptraffic.h"
#include "hardware.h"
#include "testdata.h"
#include "units.h"

#include <QJsonArray>
#include <QTest>

#include <cmath>

using namespace paraplan;

namespace {

double parseSize(const QJsonValue& value)
{
    const std::optional<double> bytes = units::parseBytes(value.toString().toStdString());
    return bytes ? *bytes : std::nan("");
}

WireApproximation approximationNamed(const QString& name)
{
    if (name == "large-n")
        return WireApproximation::LargeN;
    if (name == "one-pass")
        return WireApproximation::OnePass;
    return WireApproximation::Exact;
}

// One seed example computed through the core the way the seed counts it.
double compute(const QJsonObject& example, QString* failure)
{
    const QString kind = example["kind"].toString();
    const QString quantity = example["quantity"].toString();
    CollectiveOp op = CollectiveOp::AllReduce;
    if (example.contains("op") && !parseCollectiveOp(example["op"].toString().toStdString(), &op)) {
        *failure = "unknown op";
        return 0;
    }
    const int ranks = example["ranks"].toInt();
    if (kind == "flat") {
        const double bytes = parseSize(example["bytes"]);
        const CollectiveModel model = CollectiveModel::flatLink(example["bw_GBps"].toDouble());
        CollectiveRequest request;
        request.op = op;
        request.bytes = bytes;
        request.ranks = ranks;
        request.algorithm = Algorithm::Ring;
        const CollectiveResult exact = model.evaluate(request);
        if (!exact.ok) {
            *failure = QString::fromStdString(exact.error);
            return 0;
        }
        const WireApproximation approximation =
            approximationNamed(example["approximation"].toString());
        const double wire = approximateWireBytesPerRank(op, bytes, ranks, approximation);
        if (approximation == WireApproximation::Exact && wire != exact.wire_bytes_per_rank) {
            *failure = "exact wire bytes disagree with the model";
            return 0;
        }
        if (quantity == "time_s")
            return wire / exact.bottleneck_Bps + exact.latency_s;
        if (quantity == "bytes_per_rank")
            return wire;
        if (quantity == "fraction_of_large_n")
            return exact.wire_bytes_per_rank /
                   approximateWireBytesPerRank(op, bytes, ranks, WireApproximation::LargeN);
        if (quantity == "shard_bytes")
            return bytes / ranks;
    } else if (kind == "measured") {
        const std::optional<double> time =
            units::parseSeconds(example["time"].toString().toStdString());
        const MeasuredBandwidth bw =
            bandwidthFromMeasuredTime(op, parseSize(example["bytes"]), ranks, *time);
        if (quantity == "busbw_GBps")
            return units::toGBps(bw.busbw_Bps);
    } else if (kind == "dp_traffic") {
        const double P = example["params"].toDouble() * example["bytes_per_param"].toDouble();
        const DataParallelTraffic traffic = dataParallelTraffic(example["zero"].toInt(), P, ranks);
        if (quantity == "passes")
            return traffic.wire_bytes_per_rank / P;
    } else if (kind == "memory") {
        const double params = example["params"].toDouble();
        const double state = zeroModelStateBytesPerGpu(example["zero"].toInt(), params, ranks);
        if (quantity == "bytes_per_param")
            return state / params;
        if (quantity == "GB")
            return units::toGB(state);
    }
    *failure = "no way to compute kind '" + kind + "', quantity '" + quantity + "'";
    return 0;
}

ClusterSpec cluster(const std::string& json)
{
    std::vector<std::string> errors;
    ClusterSpec spec;
    if (!clusterFromJsonText(json, "test", {}, &spec, &errors, HardwareCatalog::bundled()))
        qFatal("%s", errors.front().c_str());
    return spec;
}

CollectiveResult allReduce(const CollectiveModel& model, double bytes, int ranks, int stride = 1,
                           Algorithm algorithm = Algorithm::Auto)
{
    CollectiveRequest request;
    request.bytes = bytes;
    request.ranks = ranks;
    request.stride = stride;
    request.algorithm = algorithm;
    return model.evaluate(request);
}

double flatOnePassTime(double bytes, int ranks, double GBps)
{
    return approximateWireBytesPerRank(CollectiveOp::AllReduce, bytes, ranks,
                                       WireApproximation::OnePass) /
           units::bytesPerSecondFromGBps(GBps);
}

} // namespace

class TestSeedExamples : public QObject
{
    Q_OBJECT

private slots:
    void workedNumbers_data()
    {
        QTest::addColumn<QJsonObject>("example");
        const QJsonObject root = test::loadJson("seed_examples.json");
        const QJsonArray examples = root["examples"].toArray();
        QVERIFY2(examples.size() >= 30, "the seed table must list every worked number");
        for (const QJsonValue& value : examples) {
            const QJsonObject example = value.toObject();
            QTest::newRow(example["id"].toString().toUtf8().constData()) << example;
        }
    }
    void workedNumbers()
    {
        QFETCH(QJsonObject, example);
        QString failure;
        const double actual = compute(example, &failure);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        const double expected = example["expected"].toDouble();
        const double tolerance = example["tolerance"].toDouble();
        QVERIFY2(std::fabs(actual - expected) <= tolerance + 1e-12 * std::fabs(expected),
                 qPrintable(QString("%1: computed %2, the seed says %3 (+/- %4)")
                                .arg(example["quote"].toString())
                                .arg(actual, 0, 'g', 6)
                                .arg(expected)
                                .arg(tolerance)));
    }

    void seedCatalogFigures()
    {
        const HardwareCatalog& catalog = HardwareCatalog::bundled();
        // 11.1.1: Gen4 x16 64 GB/s and Gen5 128 GB/s bidirectional; NVLink 4 900 GB/s and
        // NVLink 3 600 GB/s aggregate bidirectional per GPU.
        QCOMPARE(catalog.interconnect("pcie-gen4-x16")->bidirectionalGBps(), 64.0);
        QCOMPARE(catalog.interconnect("pcie-gen5-x16")->bidirectionalGBps(), 128.0);
        const GpuSpec* h100 = catalog.gpu("h100-sxm5-80gb");
        const GpuSpec* a100 = catalog.gpu("a100-sxm4-80gb");
        QCOMPARE(h100->nvlink_links * catalog.interconnect("nvlink4")->bidirectionalGBps(), 900.0);
        QCOMPARE(a100->nvlink_links * catalog.interconnect("nvlink3")->bidirectionalGBps(), 600.0);
        // "PCIe is roughly 26x slower than the GPU's own memory bus" (3.35 TB/s vs 128 GB/s).
        const double ratio =
            h100->hbm_GBps / catalog.interconnect("pcie-gen5-x16")->bidirectionalGBps();
        QVERIFY(std::fabs(ratio - 26) < 0.5);
        // 11.1.2: a rack of 32 DGX nodes is 256 GPUs.
        ClusterSpec dgx;
        std::string error;
        QVERIFY(clusterFromPreset("dgx-h100", {}, &dgx, &error, HardwareCatalog::bundled()));
        QCOMPARE(dgx.network.nodes_per_rack * dgx.node.gpus, 256);
    }

    void seedNetworkAsymmetry()
    {
        const HardwareCatalog& catalog = HardwareCatalog::bundled();
        const double nvswitch = 18 * catalog.interconnect("nvlink4")->bidirectionalGBps();
        const double hdr = catalog.interconnect("ib-hdr")->per_direction_GBps;
        const double ndr = catalog.interconnect("ib-ndr")->per_direction_GBps;
        // "A node with a single HDR port at 25 GB/s has a 36x bandwidth asymmetry".
        QCOMPARE(nvswitch / hdr, 36.0);
        // "four NDR ports at 50 GB/s each gets 200 GB/s cross-node, a 4.5x asymmetry".
        QCOMPARE(4 * ndr, 200.0);
        QCOMPARE(nvswitch / (4 * ndr), 4.5);
        // "InfiniBand per node (25-100 GB/s) is 10-36x lower than NVSwitch (900 GB/s)":
        // the 100 GB/s end gives 9x, which the seed rounds to 10.
        QCOMPARE(nvswitch / 100.0, 9.0);
    }

    void seedNvswitchFailure()
    {
        // "If one chip fails ... dropping peak crossbar bandwidth by roughly 25%. Effective
        // allreduce bandwidth can fall 20-30%."
        ClusterSpec dgx;
        std::string error;
        QVERIFY(clusterFromPreset("dgx-h100", {}, &dgx, &error, HardwareCatalog::bundled()));
        const double healthy = allReduce(CollectiveModel(dgx), 8e9, 8).busbw_Bps;
        double sum = 0;
        for (int chip = 0; chip < 4; ++chip) {
            ClusterSpec failed = dgx;
            failed.what_if.nvswitch_chips_out = {chip};
            const double busbw = allReduce(CollectiveModel(failed), 8e9, 8).busbw_Bps;
            const double drop = 1 - busbw / healthy;
            QVERIFY2(drop >= 0.20 && drop <= 0.30, qPrintable(QString::number(drop)));
            sum += drop;
        }
        QVERIFY(std::fabs(sum / 4 - 0.25) < 0.005);
    }

    void seedStepFractions()
    {
        // 11.1.2: 136 ms is ~15-23% of a 600-900 ms step; 272 ms is 30-45%.
        const double inRack = flatOnePassTime(14e9, 32, 100);
        const double crossRack = flatOnePassTime(14e9, 32, 50);
        QVERIFY(std::fabs(inRack / 0.9 - 0.15) < 0.005);
        QVERIFY(std::fabs(inRack / 0.6 - 0.23) < 0.005);
        QVERIFY(std::fabs(crossRack / 0.9 - 0.30) < 0.005);
        QVERIFY(std::fabs(crossRack / 0.6 - 0.45) < 0.005);
        // 11.2.1: "88 ms of gradient sync against 500 ms of forward+backward compute for a 7B
        // model is under 15% overhead" (as a share of the step, 88 / 588).
        // With the seed's rounded 88 ms it is 14.97%; the unrounded 88.4 ms gives 15.03%.
        const CollectiveModel nvlink = CollectiveModel::flatLink(277);
        const double sync = allReduce(nvlink, 14e9, 8).time_s;
        QVERIFY(std::fabs(sync - 0.088) < 0.001);
        QVERIFY(0.088 / (0.088 + 0.5) < 0.15);
        QVERIFY(std::fabs(sync / (sync + 0.5) - 0.15) < 0.001);
    }

    void seedSpineOversubscription()
    {
        // "When collective operations cross spine switches under 2:1 or 4:1 oversubscription,
        // the effective allreduce bandwidth halves or quarters."
        auto crossRackTime = [](double ratio) {
            ClusterOptions options;
            options.nodes = 64;
            options.nodes_per_rack = 32;
            options.spine_oversubscription = ratio;
            ClusterSpec spec;
            std::string error;
            clusterFromPreset("dgx-h100", options, &spec, &error, HardwareCatalog::bundled());
            return allReduce(CollectiveModel(spec), 14e9, 64, 8).bandwidth_time_s;
        };
        const double flat = crossRackTime(1);
        QVERIFY(std::fabs(crossRackTime(2) / flat - 2) < 1e-9);
        QVERIFY(std::fabs(crossRackTime(4) / flat - 4) < 1e-9);
    }

    void seedRackExampleOnCluster()
    {
        // The 32-node example on the cluster model: DGX H100 nodes with the seed's two NDR
        // ports each, TP = 8 inside the node, so the hierarchical all-reduce's inter-node phase
        // carries each GPU's 14 GB / 8 shard over its share of the two NICs.
        const CollectiveModel inRack(
            cluster(R"({"preset": "dgx-h100", "nodes": 32, "node": {"nics": 2}})"));
        const CollectiveModel crossRack(cluster(
            R"({"preset": "dgx-h100", "nodes": 128, "node": {"nics": 2},
                "network": {"nodes_per_rack": 32, "spine_oversubscription": 2}})"));
        const CollectiveResult a = allReduce(inRack, 14e9, 256, 1, Algorithm::Hierarchical);
        const CollectiveResult b = allReduce(crossRack, 14e9, 1024, 1, Algorithm::Hierarchical);
        QVERIFY(a.ok && b.ok);
        QCOMPARE(a.racks_spanned, 1);
        QCOMPARE(b.racks_spanned, 4);
        QCOMPARE(b.phases[1].tier, Tier::Spine);
        // Exact: 2 x 31/32 x 14 GB over 100 GB/s x 0.94 per node. The seed's 136 ms counts
        // the bytes once against a bidirectional figure; the exact figure is twice that
        // divided by the NIC efficiency.
        const double expected = 2.0 * 31 / 32 * 14e9 / (2 * 50e9 * 0.94);
        QVERIFY(std::fabs(a.phases[1].time_s - expected) < 1e-9);
        QVERIFY(std::fabs(a.phases[1].time_s - 2 * 0.136 / 0.94) < 0.005);
        // Across the 2:1 spine the inter-node phase doubles (127/128 vs 31/32 aside).
        const double ratio = b.phases[1].time_s / a.phases[1].time_s;
        QVERIFY2(ratio > 1.95 && ratio < 2.05, qPrintable(QString::number(ratio)));
    }

    void seedTpuRatio()
    {
        // "Same run on a TPU v4 pod with 1,024 chips and 340 GB/s ICI per chip ... 4-7x faster
        // than the within-rack GPU case." The seed's own one-pass method gives 41 ms: 3.3x its
        // 136 ms in-rack case and 6.6x its 272 ms cross-rack case. We pin what the inputs give.
        const double tpu = flatOnePassTime(14e9, 1024, 340);
        const double inRack = flatOnePassTime(14e9, 32, 100);
        const double crossRack = flatOnePassTime(14e9, 32, 50);
        QVERIFY(std::fabs(inRack / tpu - 3.3) < 0.05);
        QVERIFY(std::fabs(crossRack / tpu - 6.6) < 0.05);
        // On the cluster models the torus beats the GPU rack too, in the same direction:
        // per-axis rings on all six links against two NICs per 8-GPU node.
        ClusterOptions chips;
        chips.nodes = 1024;
        ClusterSpec pod;
        std::string error;
        QVERIFY(clusterFromPreset("tpu-v4-pod", chips, &pod, &error, HardwareCatalog::bundled()));
        const CollectiveResult torus = allReduce(CollectiveModel(pod), 14e9, 1024);
        const CollectiveResult gpu = allReduce(
            CollectiveModel(cluster(R"({"preset": "dgx-h100", "nodes": 32, "node": {"nics": 2}})")),
            14e9, 256);
        QCOMPARE(torus.algorithm, Algorithm::Torus);
        QVERIFY2(torus.time_s < gpu.time_s,
                 qPrintable(QString("%1 vs %2").arg(torus.time_s).arg(gpu.time_s)));
    }

    void seedZeroRatio()
    {
        // "ZeRO stage 3 costs 3P per rank versus 2P ... 1.5x more communication".
        for (int ranks : {8, 64, 1024}) {
            const double z1 = dataParallelTraffic(1, 14e9, ranks).wire_bytes_per_rank;
            const double z3 = dataParallelTraffic(3, 14e9, ranks).wire_bytes_per_rank;
            QCOMPARE(z3 / z1, 1.5);
            QCOMPARE(dataParallelTraffic(0, 14e9, ranks).wire_bytes_per_rank, z1);
        }
    }

    void seedAdamShard()
    {
        // "An Adam step on 1.75 GB of parameters takes ~3 ms on an H100 (memory-bandwidth bound
        // at roughly 900 GB/s HBM for small kernels, plus CUDA overhead)". The memory-bound
        // part from the seed's own inputs is 1.75 GB / 900 GB/s = 1.9 ms; the rest is overhead
        // the seed does not size.
        const double memoryBound = 1.75e9 / units::bytesPerSecondFromGBps(900);
        QVERIFY(memoryBound > 1.9e-3 && memoryBound < 2.0e-3);
        QVERIFY(memoryBound < 3e-3);
    }

    void seedCrossNodeSlowdown()
    {
        // "A 5x slowdown versus NVLink" for 138 ms (InfiniBand, 64 ranks) against 88 ms
        // (NVLink, 8 ranks): the seed's own figures give 1.6x.
        const double ib = allReduce(CollectiveModel::flatLink(200), 14e9, 64).time_s;
        const double nvlink = allReduce(CollectiveModel::flatLink(277), 14e9, 8).time_s;
        QVERIFY(std::fabs(ib / nvlink - 1.56) < 0.02);
    }
};

QTEST_GUILESS_MAIN(TestSeedExamples)
#include "tst_seedexamples.moc"
