"""The audit report (`litmus-rules report`): computation (summary.py, compute.py, stats.py,
provenance.py) apart from presentation (present.py, charts.py, templates/)."""
