// paraplan-cli export-cluster: a cluster preset, with options applied, as a cluster JSON file.
#include "common.h"

#include "clusterio.h"

namespace paraplan::cli {

Options exportClusterOptions()
{
    Options options = clusterOptions();
    options.push_back(valueOption("-o", "FILE", "The cluster JSON file to write (- for stdout)."));
    return options;
}

int runExportCluster(const Args& args, std::ostream& out)
{
    const ClusterSpec cluster = clusterFromArgs(args);
    if (args.text("-o") == "-") {
        out << clusterToJsonText(cluster);
        return kExitOk;
    }
    // "wrote" only once the file is on disk; otherwise the OS's reason, exit 3.
    saveClusterFileOrThrow(args.text("-o"), cluster);
    out << "wrote " << args.text("-o") << "\n";
    return kExitOk;
}

} // namespace paraplan::cli
