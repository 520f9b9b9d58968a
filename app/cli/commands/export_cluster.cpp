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
    std::string error;
    // "wrote" only once the file is on disk; otherwise the OS's reason, exit 2.
    if (!saveClusterFile(args.text("-o"), cluster, &error))
        throw UsageError(error);
    out << "wrote " << args.text("-o") << "\n";
    return kExitOk;
}

} // namespace paraplan::cli
