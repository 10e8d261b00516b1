"""Dataset loaders: a local data directory first, the Hugging Face hub when files are absent."""

from .arc import ArcItem, arc_easy_file, load_arc_easy
from .gsm8k import Gsm8kItem, gsm8k_file, load_gsm8k
from .hellaswag import HellaSwagItem, hellaswag_file, load_hellaswag
from .mmlu import CATEGORIES, SUBJECTS, MmluItem, load_mmlu, mmlu_file
from .source import DATA_DIR_ENV, checksums, file_sha256, hub_rows, resolve_data_dir

__all__ = [
    "CATEGORIES",
    "DATA_DIR_ENV",
    "SUBJECTS",
    "ArcItem",
    "Gsm8kItem",
    "HellaSwagItem",
    "MmluItem",
    "arc_easy_file",
    "checksums",
    "file_sha256",
    "gsm8k_file",
    "hellaswag_file",
    "hub_rows",
    "load_arc_easy",
    "load_gsm8k",
    "load_hellaswag",
    "load_mmlu",
    "mmlu_file",
    "resolve_data_dir",
]
