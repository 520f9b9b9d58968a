#pragma once

namespace paraplan::cli {

/// Lets `report` lay out its PDF with the GUI library's ReportWriter, as File > Export report
/// does (setReportRunner). Built only with Qt Widgets (paraplan_cli_report); a report then
/// needs a QApplication, on the offscreen platform without a display.
void useWidgetReport();

} // namespace paraplan::cli
