// Hostile input: devices, huge headers, overflowing and non-finite numbers, absurd sizes,
// garbage. Each case runs the real paraplan-cli binary and must end with exit status 2 and
// one "error:" line, within 10 s and 500 MB (wider bounds under the sanitizers, which are
// slower and heavier by design).

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

extern char** environ;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

struct Outcome
{
    int status = -1; ///< exit status; -1 when killed or not run
    QString err;
    double seconds = 0;
    long maxRssKb = 0;
    bool timedOut = false;
};

// Runs paraplan-cli with `args`, stdout discarded, stderr captured; killed after `limit_s`.
Outcome runCli(const QStringList& args, double limit_s)
{
    const std::string binary = std::string(PARAPLAN_BINARY_DIR) + "/app/paraplan-cli";
    std::vector<std::string> storage{binary};
    for (const QString& arg : args)
        storage.push_back(arg.toStdString());
    std::vector<char*> argv;
    for (std::string& s : storage)
        argv.push_back(s.data());
    argv.push_back(nullptr);

    int pipeFds[2];
    Outcome outcome;
    if (pipe(pipeFds) != 0)
        return outcome;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], 2);
    posix_spawn_file_actions_addclose(&actions, pipeFds[0]);
    pid_t pid = 0;
    const auto start = std::chrono::steady_clock::now();
    const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipeFds[1]);
    if (spawned != 0) {
        close(pipeFds[0]);
        return outcome;
    }
    QByteArray err;
    char buffer[4096];
    while (true) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > limit_s) {
            kill(pid, SIGKILL);
            outcome.timedOut = true;
            break;
        }
        pollfd fd{pipeFds[0], POLLIN, 0};
        if (poll(&fd, 1, 100) > 0) {
            const ssize_t n = read(pipeFds[0], buffer, sizeof buffer);
            if (n <= 0)
                break; // the child closed stderr: it is exiting
            if (err.size() < (1 << 20))
                err.append(buffer, static_cast<int>(n));
        }
    }
    close(pipeFds[0]);
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    outcome.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    outcome.maxRssKb = usage.ru_maxrss;
    outcome.err = QString::fromUtf8(err);
    return outcome;
}

// Overflowing, non-finite and absurd numbers, each in one field of a valid plan.
struct PlanField
{
    const char* name;
    const char* section;
    const char* key;
    const char* value;
};
constexpr PlanField kPlanFields[] = {
    {"seq_len 2e9", "training", "seq_len", "2000000000"},
    {"seq_len 2^31", "training", "seq_len", "2147483648"},
    {"gpu_hour_usd 1e308", "training", "gpu_hour_usd", "1e308"},
    {"train_tokens 1e300", "training", "train_tokens", "1e300"},
    {"train_tokens 1e400", "training", "train_tokens", "1e400"},
    {"nodes 2e9", "cluster", "nodes", "2000000000"},
    {"nodes -1", "cluster", "nodes", "-1"},
    {"tp 2^31-1", "parallel", "tp", "2147483647"},
    {"dp x pp overflow", "parallel", "pp", "1048576"},
    {"global batch 2e9", "parallel", "global_batch", "2000000000"},
    {"micro batch 0.5", "parallel", "micro_batch", "0.5"},
    {"interleave huge", "parallel", "interleave", "2000000000"},
    {"cp 2^30", "parallel", "cp", "1073741824"},
    {"stage layers huge", "parallel", "first_stage_layers", "2000000000"},
    {"string number", "parallel", "tp", "\"8\""},
    {"NaN string", "training", "seq_len", "\"nan\""},
};

QString planFile(const PlanField& field)
{
    return QString("plan-%1.json").arg(field.name).replace(' ', '_').replace('^', 'p');
}

} // namespace

class TestHostile : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    QString write(const QString& name, const QByteArray& bytes) const
    {
        QFile file(path(name));
        if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
            qFatal("cannot write %s", qPrintable(path(name)));
        return path(name);
    }

    // A valid plan with one field replaced (as JSON text).
    QString plan(const QString& name, const QString& section, const QString& key,
                 const QString& value) const
    {
        QString text = QStringLiteral(
            R"({"schema": "paraplan-plan/1", "name": "hostile",
  "model": {"preset": "llama3-8b"},
  "cluster": {"preset": "dgx-h100", "nodes": 2},
  "parallel": {"tp": 8, "pp": 1, "dp": 2, "micro_batch": 1, "global_batch": 64},
  "training": {"seq_len": 8192, "dtype": "bf16"}})");
        const QString anchor = "\"" + section + "\": {";
        const int at = text.indexOf(anchor);
        if (at < 0)
            qFatal("no section %s", qPrintable(section));
        const QRegularExpression existing("(\"" + section + "\": \\{[^}]*?)\"" + key +
                                          "\": [^,}]+");
        if (text.contains(existing))
            text.replace(existing, "\\1\"" + key + "\": " + value);
        else
            text.insert(at + anchor.size(), "\"" + key + "\": " + value + ", ");
        return write(name, text.toUtf8());
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void hostileInputEndsWithOneErrorLine_data()
    {
        QTest::addColumn<QStringList>("args");

        // Devices, directories and pipes where files belong.
        for (const char* command : {"evaluate", "import-topology", "import-measurements"}) {
            QTest::newRow(qPrintable(QString(command) + " /dev/zero"))
                << QStringList{command, "/dev/zero"};
            QTest::newRow(qPrintable(QString(command) + " /dev/urandom"))
                << QStringList{command, "/dev/urandom"};
            QTest::newRow(qPrintable(QString(command) + " directory"))
                << QStringList{command, m_dir.path()};
        }
        QTest::newRow("model --hf /dev/zero") << QStringList{"model", "--hf", "/dev/zero"};
        QTest::newRow("cluster file /dev/zero")
            << QStringList{"collective", "--op", "all_reduce", "--bytes",  "1GB",
                           "--ranks",    "8",    "--cluster",  "/dev/zero"};
        QTest::newRow("calibrate log /dev/zero")
            << QStringList{"calibrate", "--run", path("valid.json") + ":/dev/zero"};
        QTest::newRow("writerless FIFO") << QStringList{"evaluate", path("fifo")};

        // Sizes and garbage.
        QTest::newRow("70 MiB plan") << QStringList{"evaluate", path("big.json")};
        QTest::newRow("binary plan") << QStringList{"evaluate", path("binary.json")};
        QTest::newRow("deeply nested JSON") << QStringList{"evaluate", path("nested.json")};
        QTest::newRow("topo -m 30k columns") << QStringList{"import-topology", path("wide.txt")};
        QTest::newRow("NCCL XML 100k GPUs") << QStringList{"import-topology", path("gpus.xml")};
        QTest::newRow("NCCL XML nested pci") << QStringList{"import-topology", path("deep.xml")};
        QTest::newRow("garbage measurements")
            << QStringList{"import-measurements", path("binary.json")};

        // Overflowing, non-finite and absurd numbers in a plan (kPlanFields).
        for (const PlanField& f : kPlanFields)
            QTest::newRow(f.name) << QStringList{
                "evaluate",
                path(QString("plan-%1.json").arg(f.name).replace(' ', '_').replace('^', 'p'))};
        QTest::newRow("2e9 NICs") << QStringList{"evaluate", path("nics.json")};
        QTest::newRow("1e308 NIC rate") << QStringList{"evaluate", path("nicrate.json")};
        QTest::newRow("nvswitch links overflow")
            << QStringList{"evaluate", path("switchlinks.json")};
        QTest::newRow("torus dims overflow") << QStringList{"evaluate", path("torus.json")};

        // Absurd command lines.
        QTest::newRow("--bw-GBps 1e308")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "8",    "--bw-GBps",  "1e308"};
        QTest::newRow("1e8-rank all-to-all")
            << QStringList{"collective", "--op",      "all_to_all", "--bytes", "1GB",
                           "--ranks",    "100000000", "--bw-GBps",  "100"};
        QTest::newRow("--bytes inf")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "inf",
                           "--ranks",    "8",    "--bw-GBps",  "100"};
        QTest::newRow("--latency-us nan")
            << QStringList{"collective", "--op", "all_reduce",   "--bytes", "1GB", "--ranks", "8",
                           "--bw-GBps",  "100",  "--latency-us", "nan"};
        QTest::newRow("dp-traffic 1e308 params")
            << QStringList{"dp-traffic", "--params", "1e308", "--ranks", "8"};
        QTest::newRow("sweep 1e300 bytes")
            << QStringList{"sweep-collective", "--op", "all_reduce",  "--ranks", "8",
                           "--bw-GBps",        "100",  "--max-bytes", "1e300"};
        QTest::newRow("measured time 1e-300")
            << QStringList{"walkthrough", "--op", "all_reduce",      "--bytes", "1GB",
                           "--ranks",     "8",    "--measured-time", "1e-300"};
        QTest::newRow("--bw-GBps 1e-300")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "8",    "--bw-GBps",  "1e-300"};
        QTest::newRow("hex ranks")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "0x10", "--bw-GBps",  "100"};
        QTest::newRow("no command") << QStringList{};
        QTest::newRow("empty file name") << QStringList{"evaluate", ""};

        // Outputs that would destroy something.
        QTest::newRow("report over its own plan")
            << QStringList{"report", path("valid.json"), "-o", path("valid.json")};
        QTest::newRow("cluster into a directory")
            << QStringList{"export-cluster", "--cluster", "dgx-h100", "-o", m_dir.path()};
        QTest::newRow("topology over its input")
            << QStringList{"import-topology", path("wide.txt"), "-o", path("wide.txt")};
        QTest::newRow("plan of another schema") << QStringList{"evaluate", path("schema.json")};
        QTest::newRow("nodes 1e9 on the command line")
            << QStringList{"collective", "--op",      "all_reduce", "--bytes", "1GB", "--ranks",
                           "8",          "--cluster", "dgx-h100",   "--nodes", "1e9"};
    }

    void hostileInputEndsWithOneErrorLine()
    {
        QFETCH(QStringList, args);
        const double limit = kSanitized ? 60 : 10;
        const Outcome run = runCli(args, limit + 5);
        QVERIFY2(!run.timedOut, "still running after the time limit");
        QVERIFY2(run.seconds < limit, qPrintable(QString::number(run.seconds) + " s"));
        if (!kSanitized)
            QVERIFY2(run.maxRssKb < 500 * 1024, qPrintable(QString::number(run.maxRssKb) + " KB"));
        // A directory given as an input or an output cannot be read or written: an I/O error
        // (3); everything else here is bad input (2).
        const int expected = QString(QTest::currentDataTag()).endsWith("directory") ? 3 : 2;
        QVERIFY2(run.status == expected,
                 qPrintable("exit " + QString::number(run.status) + ": " + run.err.left(500)));
        const QStringList lines = run.err.split('\n', Qt::SkipEmptyParts);
        int errors = 0;
        for (const QString& line : lines)
            errors += line.startsWith("error: ");
        QVERIFY2(errors == 1 && lines.size() <= 25,
                 qPrintable(QString::number(lines.size()) + " lines: " + run.err.left(800)));
        // No number printed as inf or nan (a user's own text may be quoted: 'inf').
        static const QRegularExpression nonFinite("(?<!')\\b-?(inf|nan)\\b(?!')",
                                                  QRegularExpression::CaseInsensitiveOption);
        QVERIFY2(!nonFinite.match(run.err).hasMatch(), qPrintable(run.err));
    }

public:
    TestHostile()
    {
        const QByteArray valid = R"({"schema": "paraplan-plan/1", "name": "valid",
  "model": {"preset": "llama3-8b"}, "cluster": {"preset": "dgx-h100", "nodes": 2},
  "parallel": {"tp": 8, "pp": 1, "dp": 2, "micro_batch": 1, "global_batch": 64},
  "training": {"seq_len": 8192, "dtype": "bf16"}})";
        write("valid.json", valid);
        mkfifo(path("fifo").toLocal8Bit().constData(), 0600);
        write("big.json", "{\"name\": \"" + QByteArray(70 << 20, 'x') + "\"}");
        QByteArray binary(1 << 20, '\0');
        for (int i = 0; i < binary.size(); ++i)
            binary[i] = static_cast<char>((i * 2654435761u) >> 13);
        write("binary.json", binary);
        write("nested.json", QByteArray(200000, '[') + QByteArray(200000, ']'));
        QByteArray wide = "\t";
        for (int i = 0; i < 30000; ++i)
            wide += "GPU" + QByteArray::number(i) + "\t";
        write("wide.txt", wide + "\nGPU0\tX\n");
        QByteArray gpus = "<system version=\"1\"><cpu>";
        for (int i = 0; i < 100000; ++i)
            gpus += "<pci busid=\"" + QByteArray::number(i) +
                    "\" class=\"0x030200\"><gpu sm=\"90\"/></pci>";
        write("gpus.xml", gpus + "</cpu></system>");
        write("deep.xml", "<system version=\"1\">" +
                              QByteArray(100000 * 5, ' ').replace("     ", "<pci>") + "</system>");
        for (const PlanField& f : kPlanFields)
            plan(planFile(f), f.section, f.key, f.value);
        plan("nics.json", "cluster", "node", R"({"nics": 2e9})");
        write("schema.json", QByteArray(valid).replace("paraplan-plan/1", "paraplan-plan/999"));
        plan("nicrate.json", "cluster", "node", R"({"nic_GBps": 1e308})");
        plan("switchlinks.json", "cluster", "node",
             R"({"switch_links_per_gpu": [2000000000, 2000000000, 2000000000]})");
        write("torus.json", R"({"schema": "paraplan-plan/1", "model": {"preset": "llama3-8b"},
  "cluster": {"preset": "tpu-v4-pod", "nodes": 64, "torus": {"dims": [2000000000, 2000000000, 2000000000]}},
  "parallel": {"tp": 8, "pp": 1, "dp": 8, "micro_batch": 1, "global_batch": 64},
  "training": {"seq_len": 8192, "dtype": "bf16"}})");
    }
};

QTEST_GUILESS_MAIN(TestHostile)
#include "tst_hostile.moc"
