// paraplan-cli import-topology: 'nvidia-smi topo -m' output or an NCCL topology XML dump as a
// cluster file.
#include "common.h"

#include "clusterio.h"
#include "topologyimport.h"

namespace paraplan::cli {

Options importTopologyOptions()
{
    return {
        valueOption("-o", "FILE",
                    "The cluster file to write (without it, or with -, the JSON goes to stdout)."),
        valueOption("--gpu", "ID",
                    "The GPU (see 'paraplan-cli presets'), where the file does not say."),
        valueOption("--nic", "ID",
                    "The NIC (an interconnect preset): the file does not give its speed."),
        valueOption("--nodes", "N", "Nodes of this kind in the cluster (default 1)."),
        valueOption("--nodes-per-rack", "R", "Nodes behind one rack switch."),
        valueOption("--oversubscription", "R", "Spine oversubscription, R:1 (1 = non-blocking)."),
    };
}

int runImportTopology(const Args& args, std::ostream& out)
{
    TopologyImportOptions import;
    if (args.has("--gpu"))
        import.gpu_id = args.text("--gpu");
    if (args.has("--nic"))
        import.nic_id = args.text("--nic");
    if (args.has("--nodes"))
        import.nodes = static_cast<int>(args.within("--nodes", limits::kNodes));
    if (args.has("--nodes-per-rack"))
        import.nodes_per_rack =
            static_cast<int>(args.within("--nodes-per-rack", limits::kNodesPerRack));
    if (args.has("--oversubscription"))
        import.spine_oversubscription =
            args.within("--oversubscription", limits::kOversubscription);
    if (args.has("-o"))
        refuseOverwritingInput("-o", args.text("-o"), {args.positional().front()});
    TopologyImport result;
    std::string error;
    if (!importTopologyFile(args.positional().front(), import, &result, &error,
                            HardwareCatalog::bundled()))
        throw UsageError(error);
    if (!args.has("-o") || args.text("-o") == "-") {
        out << clusterToJsonText(result.cluster);
        return kExitOk;
    }
    saveClusterFileOrThrow(args.text("-o"), result.cluster);
    out << "Read " << args.positional().front() << " (" << result.format << "): " << result.gpus
        << " GPUs, " << result.nics << " NICs, " << nodeFabricName(result.cluster.node.fabric)
        << " fabric\n";
    for (const std::string& note : result.notes)
        out << "  " << note << "\n";
    out << "wrote " << args.text("-o") << " (" << result.cluster.nodes << " node(s))\n";
    return kExitOk;
}

} // namespace paraplan::cli
