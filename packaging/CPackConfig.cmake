# `cpack --config build/CPackConfig.cmake` (or `cmake --build build --target package`) builds
# a .deb of the installed targets. Library dependencies are found by dpkg-shlibdeps.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "paraplan")
set(CPACK_PACKAGE_VENDOR "Paraplan developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Parallelism planner for distributed training")
set(CPACK_PACKAGE_DESCRIPTION "Paraplan models what a training step costs on a GPU or TPU cluster: \
compute, pipeline bubble, every collective, memory per stage, with worked derivations.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Paraplan developers <dev@paraplan.invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
