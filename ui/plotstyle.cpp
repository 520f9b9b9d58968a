// The plots' shared style: the Okabe-Ito palette, the one colour of each component, the pen
// of a network boundary, the log-10 axis.

#include "plotstyle.h"

#include <qcustomplot.h>

#include <QHash>

namespace paraplan::ui {

namespace plotstyle {

// The colour-blind-safe palette of Okabe and Ito: M. Okabe and K. Ito, "Color Universal Design
// (CUD): How to make figures and presentations that are friendly to colorblind people" (2008),
// https://jfly.uni-koeln.de/color/ (its eight colours, in RGB 0-255).
namespace okabeito {
const QColor kBlack(0, 0, 0);
const QColor kOrange(230, 159, 0);
const QColor kSkyBlue(86, 180, 233);
const QColor kBluishGreen(0, 158, 115);
const QColor kYellow(240, 228, 66);
const QColor kBlue(0, 114, 178);
const QColor kVermillion(213, 94, 0);
const QColor kReddishPurple(204, 121, 167);
} // namespace okabeito

// Greys differ in lightness only, which every kind of colour vision tells apart.
const QColor kMidGrey(150, 150, 150);
const QColor kLightGrey(215, 215, 215);

const QColor kPalette[] = {okabeito::kBlue,          okabeito::kOrange,     okabeito::kBluishGreen,
                           okabeito::kReddishPurple, okabeito::kSkyBlue,    okabeito::kVermillion,
                           okabeito::kYellow,        QColor(120, 120, 120), okabeito::kBlack};

QColor colour(int i)
{
    return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

QColor componentColour(const QString& key)
{
    using namespace okabeito;
    // The step: work in blues, idle time grey, each group's exposed communication its own
    // colour, the optimizer reddish purple. Memory: the optimizer's state keeps the optimizer's
    // colour, activations the recompute's (recompute trades one for the other).
    static const QHash<QString, QColor> map = {
        {"compute", kBlue},
        {"recompute", kSkyBlue},
        {"bubble", kMidGrey},
        {"tp_comm_exposed", kOrange},
        {"cp_comm_exposed", kYellow},
        {"ep_comm_exposed", kBlack},
        {"pp_comm_exposed", kBluishGreen},
        {"dp_comm_exposed", kVermillion},
        {"optimizer", kReddishPurple},
        {"comm_hidden", kLightGrey},
        {"weights", kBlue},
        {"gradients", kBluishGreen},
        {"optimizer_state", kReddishPurple},
        {"activations", kSkyBlue},
        {"buffers", kMidGrey},
    };
    return map.value(key, kMidGrey);
}

QPen boundaryPen()
{
    // Dark grey: apart from the dotted light-grey grid and from every data colour (vermillion
    // is DP comm's).
    return QPen(QColor(0x44, 0x44, 0x44), 1.5, Qt::SolidLine);
}

void useLog10Axis(QCPAxis* axis)
{
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setSubTickCount(0);
    axis->setTicker(ticker);
    axis->setNumberFormat("eb");
    axis->setNumberPrecision(0);
}

} // namespace plotstyle

} // namespace paraplan::ui
