#include "guioptions.h"

#include "reportwriter.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QImageWriter>
#include <QRegularExpression>

namespace paraplan::gui {

QString exitStatusHelp()
{
    return "Exit status (as paraplan-cli's; 1 is not used):\n"
           "  0  done: the window was closed, or --screenshot wrote its image\n"
           "  2  bad input: an option or its value; with --screenshot, a plan (or\n"
           "     --import-measurements file) that cannot be read as one (one 'error:' line\n"
           "     on stderr)\n"
           "  3  I/O error: with --screenshot, a plan (or --import-measurements file) missing\n"
           "     or unreadable, or an image that cannot be written (one 'error:' line\n"
           "     naming the file)\n";
}

int inputFailureStatus(const QString& path)
{
    const QFileInfo info(path);
    if (!path.isEmpty() && (!info.exists() || info.isDir() || !info.isReadable()))
        return kExitIo;
    return kExitUsage;
}

bool parseWindowSize(const QString& text, QSize* size, QString* error)
{
    const QString range = QString("each side a whole number of pixels from %1 to %2, e.g. 1280x800")
                              .arg(kMinWindowSide)
                              .arg(kMaxWindowSide);
    static const QRegularExpression pattern("^([0-9]{1,9})[xX]([0-9]{1,9})$");
    const QRegularExpressionMatch match = pattern.match(text);
    if (!match.hasMatch()) {
        *error = QString("--size '%1' is not WxH (%2)").arg(text, range);
        return false;
    }
    const int width = match.captured(1).toInt();
    const int height = match.captured(2).toInt();
    if (width < kMinWindowSide || width > kMaxWindowSide || height < kMinWindowSide ||
        height > kMaxWindowSide) {
        *error = QString("--size %1 is out of range (%2)").arg(text, range);
        return false;
    }
    *size = QSize(width, height);
    return true;
}

bool parseTab(const QString& text, const QStringList& names, int* index, QString* error)
{
    static const QRegularExpression digits("^[0-9]{1,9}$");
    if (digits.match(text).hasMatch()) {
        const int value = text.toInt();
        if (value < names.size()) {
            *index = value;
            return true;
        }
    } else {
        auto simple = [](QString name) { return name.remove(' ').toLower(); };
        for (int i = 0; i < names.size(); ++i) {
            if (simple(names[i]) == simple(text)) {
                *index = i;
                return true;
            }
        }
    }
    QStringList listed;
    for (int i = 0; i < names.size(); ++i)
        listed << QString("%1 %2").arg(i).arg(names[i]);
    *error = QString("--tab '%1' is not a tab (0 to %2, or a name: %3)")
                 .arg(text)
                 .arg(names.size() - 1)
                 .arg(listed.join(", "));
    return false;
}

QByteArray screenshotFormat(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    return suffix.isEmpty() ? QByteArray("png") : suffix.toLatin1();
}

namespace {

bool unknownFormat(const QString& path, QString* error)
{
    QStringList names;
    for (const QByteArray& format : QImageWriter::supportedImageFormats())
        names << QString::fromLatin1(format);
    *error = QString("--screenshot %1: cannot write '%2' images (the suffix names the format: %3)")
                 .arg(path, QString::fromLatin1(screenshotFormat(path)), names.join(", "));
    return false;
}

} // namespace

bool checkScreenshotPath(const QString& path, QString* error, int* status)
{
    int unused = 0;
    int& code = status ? *status : unused;
    code = kExitUsage;
    if (path.isEmpty()) {
        *error = "--screenshot needs a file name, e.g. window.png";
        return false;
    }
    const QFileInfo info(path);
    code = kExitIo; // a place that cannot take the file
    if (info.isDir()) {
        *error = QString("--screenshot %1: is a folder; name an image file in it, e.g. %2")
                     .arg(path, QFileInfo(QDir(path), "window.png").filePath());
        return false;
    }
    if (info.exists() && !info.isFile()) {
        // A device or socket is never replaced by an image (the write renames over it).
        *error = QString("--screenshot %1: is not a regular file").arg(path);
        return false;
    }
    if (!QImageWriter::supportedImageFormats().contains(screenshotFormat(path))) {
        code = kExitUsage;
        return unknownFormat(path, error);
    }
    const QFileInfo folder(info.absolutePath());
    if (!folder.exists()) {
        *error =
            QString("--screenshot %1: the folder %2 does not exist").arg(path, folder.filePath());
        return false;
    }
    if (!folder.isDir()) {
        *error = QString("--screenshot %1: %2 is not a folder").arg(path, folder.filePath());
        return false;
    }
    if (!folder.isWritable()) {
        *error =
            QString("--screenshot %1: the folder %2 is not writable").arg(path, folder.filePath());
        return false;
    }
    return true;
}

bool writeScreenshot(const QImage& image, const QString& path, QString* error)
{
    if (image.isNull()) {
        *error = QString("cannot write '%1': the window could not be captured").arg(path);
        return false;
    }
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QImageWriter writer(&buffer, screenshotFormat(path));
    if (!writer.write(image)) {
        *error = QString("cannot write '%1': %2").arg(path, writer.errorString());
        return false;
    }
    return ui::writeFileSafely(path, buffer.data(), error);
}

QString oneLine(const QString& text)
{
    return text.trimmed().split('\n', Qt::SkipEmptyParts).join("; ");
}

} // namespace paraplan::gui
