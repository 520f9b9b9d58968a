#pragma once

// Where Paraplan's data files are: the examples, the JSON schemas and the documents. Presets
// are compiled in (Qt resources); these are files, installed under share/paraplan and
// share/doc/paraplan beside bin/, or read from the source tree when a program runs from its
// build folder.

#include <QString>
#include <QStringList>

namespace paraplan::datapaths {

/// The data folder (share/paraplan holding examples/ and schema/): the installed one beside
/// the running executable (bin/../share/paraplan) first, then the source tree's resources/
/// this binary was built from. Empty when neither exists.
QString dataDir();

/// The folder of the running executable (QCoreApplication's when there is one, else
/// /proc/self/exe's).
QString executableDir();

/// The source tree a program in a build folder was built from: the path in the
/// paraplan-source-tree file CMake writes at the top of the build folder, found from the
/// executable's folder upwards (two levels: build/app, build/tests). Empty when installed.
QString sourceTree();

/// The example plans: every *.paraplan.json and *.json file in dataDir()/examples, listed
/// from the folder (not from a fixed list), sorted by file name, as absolute paths.
QStringList examplePlans();
/// The same listing of any folder.
QStringList examplePlansIn(const QString& folder);

/// A plan file's name without .paraplan.json or .json (an example's display name, the stem
/// of files exported from a plan).
QString planFileStem(const QString& path);

} // namespace paraplan::datapaths
