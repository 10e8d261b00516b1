"""The evaluation engine: bounded async runs, append-only records, resume, and the report.

from sieval.runner import RunOptions, load_config, run_eval

result = run_eval(load_config("eval.yaml"), RunOptions(limit=20))
"""

from ..plan.config import EvalConfig, ModelConfig, load_config, parse_config
from ..plan.plan import check_capabilities, plan_run
from ..results.report import DENOMINATOR, load_report
from ..store.records import SCHEMA_VERSION, Record, RequestRecord, read_records
from .engine import RunOptions, RunResult, arun_eval, run_eval
from .progress import NullProgress, PlainProgress, ProgressSink, RichProgress, make_progress

__all__ = [
    "DENOMINATOR",
    "SCHEMA_VERSION",
    "EvalConfig",
    "ModelConfig",
    "NullProgress",
    "PlainProgress",
    "ProgressSink",
    "Record",
    "RequestRecord",
    "RichProgress",
    "RunOptions",
    "RunResult",
    "arun_eval",
    "check_capabilities",
    "load_config",
    "load_report",
    "make_progress",
    "parse_config",
    "plan_run",
    "read_records",
    "run_eval",
]
