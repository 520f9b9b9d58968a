#pragma once

// The planner window's command line, checked before anything is shown or written: each bad
// option is one line naming the option and what it accepts (main prints it as "error: ...",
// exit status 2; a file missing, unreadable or unwritable: 3, as paraplan-cli).

#include <QImage>
#include <QSize>
#include <QString>
#include <QStringList>

namespace paraplan::gui {

/// Each side of --size, in pixels: from a window too small to read much but still drawn to
/// 8K (an 8192 x 8192 screenshot takes about 4 s and 1 GB at its peak). Below its layout's
/// smallest size the window is squeezed to the size asked for, never drawn larger.
constexpr int kMinWindowSide = 200;
constexpr int kMaxWindowSide = 8192;

/// The window's exit statuses follow paraplan-cli's table (app/cli/clicommands.h, ExitCode):
/// 0 done, 2 bad input, 3 I/O error. 1 (done, the answer is no) has no use in the window.
constexpr int kExitUsage = 2; ///< an option or its value, a file that is not what it should be
constexpr int kExitIo = 3;    ///< an input missing or unreadable, an output that cannot be written

/// The "Exit status:" part of `paraplan --help` (the man page's EXIT STATUS).
QString exitStatusHelp();

/// The exit status for an input file that could not be opened: kExitIo when `path` is missing,
/// a folder or unreadable (paraplan-cli's "cannot read"), else kExitUsage (it was read but is
/// not what it should be: not a regular file, not JSON, not a plan).
int inputFailureStatus(const QString& path);

/// "WxH" (or "WXH"), each side a whole number from kMinWindowSide to kMaxWindowSide.
bool parseWindowSize(const QString& text, QSize* size, QString* error);

/// A tab by index (0 to the number of tabs - 1) or by name (case and spaces ignored).
bool parseTab(const QString& text, const QStringList& names, int* index, QString* error);

/// Whether a screenshot can be written to `path`: a file (not a folder) in a folder that
/// exists, with a suffix naming an image format Qt writes (none: PNG). Checked before the
/// window is built; the write itself is atomic and says why when it fails. On failure *status
/// (when given) is kExitUsage for a name that is no image file name (empty, a format Qt does
/// not write) and kExitIo for a place that cannot be written.
bool checkScreenshotPath(const QString& path, QString* error, int* status = nullptr);

/// The image format `path` is written in ("png" when it has no suffix).
QByteArray screenshotFormat(const QString& path);

/// Encodes `image` and writes it atomically (a temporary beside `path`, checked, renamed);
/// on failure `path` is untouched and *error says why.
bool writeScreenshot(const QImage& image, const QString& path, QString* error);

/// A multi-line reason on one line ("; " between the lines).
QString oneLine(const QString& text);

} // namespace paraplan::gui
