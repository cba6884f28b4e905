"""The report document (render/report/compute.py) as HTML or Markdown, through Jinja2 templates.

Every number printed in the HTML sits in an element with `data-path`, the JSON path of the value it
shows in the report document: the browser test reads them back and compares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from litmus_rules.render.report.charts import flow_chart, rates_chart


def pct(x: Any) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def fixed(x: Any, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float) and 0 < abs(x) < 10 ** -digits:
        return f"{x:.2e}"
    return f"{x:.{digits}f}"


def _md(text: Any) -> str:
    """A table cell's text for Markdown: no pipe or newline breaks the table."""
    return str(text).replace("|", "\\|").replace("\n", " ")


if TYPE_CHECKING:
    import jinja2


def _env(autoescape: bool) -> jinja2.Environment:
    import jinja2  # only a report needs it: `check` starts without it

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("litmus_rules.render.report", "templates"),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(pct=pct, fixed=fixed, md=_md)
    env.globals.update(flow_chart=flow_chart, rates_chart=rates_chart)
    return env


_HTML: "jinja2.Environment | None" = None
_MD: "jinja2.Environment | None" = None


def render_html(report: Mapping[str, Any]) -> str:
    global _HTML
    _HTML = _HTML or _env(True)
    return _HTML.get_template("report.html.j2").render(r=report)


def render_markdown(report: Mapping[str, Any]) -> str:
    global _MD
    _MD = _MD or _env(False)
    return _MD.get_template("report.md.j2").render(r=report)
