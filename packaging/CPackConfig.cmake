# `cpack --config build/CPackConfig.cmake` (or `cmake --build build --target package`) builds
# two .debs from the install components (packaging/CMakeLists.txt):
#   paraplan        the window, paraplan-cli, examples, schemas, docs, man pages, completion,
#                   desktop entry, AppStream metainfo, the plan MIME type
#   paraplan-probe  the measurement probe (CUDA, NCCL, MPI when found at configure time)
# Library dependencies are found by dpkg-shlibdeps; the probe's CUDA and NCCL libraries come
# from NVIDIA's packages (or a toolkit under /usr/local/cuda) that dpkg-shlibdeps cannot
# resolve, so they are declared by NVIDIA's package names below.
set(CPACK_GENERATOR "DEB")
# The .debs and CPack's scratch folder (_CPack_Packages) go into the build folder wherever
# cpack is run from (without this, `cpack --config build/CPackConfig.cmake` run from the
# source root writes them there); `cpack -B DIR` still chooses another folder.
set(CPACK_PACKAGE_DIRECTORY "${CMAKE_BINARY_DIR}")
set(CPACK_PACKAGE_NAME "paraplan")
set(CPACK_PACKAGE_VENDOR "Paraplan developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEB_COMPONENT_INSTALL ON)
# Each component's description (below) starts with its own synopsis line. CPackDeb prepends
# CPACK_PACKAGE_DESCRIPTION_SUMMARY to every component's unless it is CPack's default text,
# which would give the probe the planner's synopsis: so the summary is left at that default.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_COMPONENTS_ALL paraplan)
if(PARAPLAN_HAVE_PROBE)
    list(APPEND CPACK_COMPONENTS_ALL paraplan-probe)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Paraplan developers <dev@paraplan.invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Files 0644 and directories 0755 in the control archive, as dpkg-deb would have them.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# Homepage: Paraplan has none yet (lintian's no-homepage-field is a pedantic tag); set
# CPACK_DEBIAN_PACKAGE_HOMEPAGE here once it has.

set(CPACK_DEBIAN_PARAPLAN_PACKAGE_NAME "paraplan")
set(CPACK_DEBIAN_PARAPLAN_PACKAGE_DEPENDS "fonts-dejavu-core")
set(CPACK_DEBIAN_PARAPLAN_PACKAGE_SUGGESTS "paraplan-probe")
set(CPACK_COMPONENT_PARAPLAN_DESCRIPTION "parallelism planner for distributed training
Paraplan models what a training step costs on a GPU or TPU cluster:
compute, pipeline bubble, every collective and the memory of each stage,
with worked derivations that cite the source of every input. It searches
the valid layouts of tensor, pipeline, context and data parallelism.
.
This package holds the window (paraplan), the command line (paraplan-cli),
example plans, JSON Schemas of the command line's outputs, the user guide,
man pages and bash and zsh completion.")

if(PARAPLAN_HAVE_PROBE)
    # NVIDIA's CUDA repository names its runtime packages cuda-cudart-<major>-<minor> and
    # libcublas-<major>-<minor> (cuBLAS and cuBLASLt), and NCCL's runtime libnccl2
    # (https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/; NVIDIA's
    # CUDA Installation Guide for Linux, "Package Manager Installation"; NCCL Installation
    # Guide, "Debian"). The versions are those of the toolkit and nccl.h found at configure time.
    set(cuda_pkg "${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
    file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" nccl_lines REGEX "^#define NCCL_(MAJOR|MINOR) +[0-9]+")
    string(REGEX MATCH "NCCL_MAJOR +([0-9]+)" unused "${nccl_lines}")
    set(nccl_major "${CMAKE_MATCH_1}")
    string(REGEX MATCH "NCCL_MINOR +([0-9]+)" unused "${nccl_lines}")
    set(nccl_minor "${CMAKE_MATCH_1}")
    set(CPACK_DEBIAN_PARAPLAN-PROBE_PACKAGE_NAME "paraplan-probe")
    set(CPACK_DEBIAN_PARAPLAN-PROBE_PACKAGE_DEPENDS
        "cuda-cudart-${cuda_pkg}, libcublas-${cuda_pkg}, libnccl${nccl_major} (>= ${nccl_major}.${nccl_minor})")
    set(CPACK_DEBIAN_PARAPLAN-PROBE_PACKAGE_ENHANCES "paraplan")
    set(CPACK_DEBIAN_PARAPLAN-PROBE_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CUDAToolkit_LIBRARY_DIR}")
    set(CPACK_COMPONENT_PARAPLAN-PROBE_DESCRIPTION "GPU measurement probe for Paraplan
paraplan-probe measures the GPUs of one machine, or of several under
mpirun: host-device and peer copies, NCCL collectives over message sizes,
GEMMs, attention and HBM bandwidth. It writes JSON Lines that Paraplan
reads to calibrate its cost model (Measure tab, paraplan-cli
import-measurements).
.
It needs an NVIDIA driver, the CUDA ${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR} runtime and cuBLAS, and NCCL
from NVIDIA's repository.")
endif()
include(CPack)
