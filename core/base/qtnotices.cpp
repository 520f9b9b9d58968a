#include "qtnotices.h"

#include <QString>
#include <QtGlobal>

#include <cstdio>
#include <cstdlib>

namespace paraplan {

namespace {

void handleQtMessage(QtMsgType type, const QMessageLogContext&, const QString& message)
{
    static const bool shown = qEnvironmentVariableIntValue("PARAPLAN_QT_MESSAGES") != 0;
    if (shown || type == QtFatalMsg) {
        std::fprintf(stderr, "qt: %s\n", qPrintable(message));
        std::fflush(stderr);
    }
    if (type == QtFatalMsg)
        std::abort();
}

} // namespace

void quietQtNotices()
{
    qInstallMessageHandler(handleQtMessage);
}

} // namespace paraplan
