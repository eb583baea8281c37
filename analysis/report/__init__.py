"""The study report (`recourse-analysis report`): one self-contained HTML page with the
participant flow, descriptives, the models, smooth plots, contrasts, segregation before and
after and coding agreement, plus the tables (CSV, LaTeX) and figures (PDF, PNG) a
manuscript includes. It reads the export only (folder or ZIP), never the platform."""

from analysis.report.build import Options, Report, build_report
from analysis.report.inputs import ReportError
from analysis.report.render import write_report

__all__ = ["Options", "Report", "ReportError", "build_report", "write_report"]
