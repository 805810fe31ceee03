"""What an issue says, as weighted terms: the text two reports are compared on.

Pure functions, no database. An issue's title and body lose what is not its own before they are
compared: Markdown comments and code fences' markers, quoted replies, links, stack frames and log
lines (what every traceback of a library repeats), and the boilerplate of its tracker (issue
template headings, learned per tracker as the lines most of its issues share, plus the common
GitHub and Gitee headings named here for trackers too small to learn from). The exception line of
a traceback stays: it is what the report says went wrong.

Terms are English words (lightly stemmed) and Chinese words (jieba's segmentation, with its own
dictionary shipped in the package: nothing is downloaded), with a small glossary that gives the
Chinese words of machine-learning reports their English term, so a report and its translation
share terms beside the error text they quote.
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

# A line shared by at least this share of a tracker's issues (and by MIN_SHARED_LINE of them) is
# its template, not what any one report says.
BOILERPLATE_SHARE = 0.3
MIN_SHARED_LINE = 3
# Terms in more than this share of a tracker's issues are its template's words too, learned once
# a tracker has TERMS_LEARNED_FROM issues (fewer would make a common word look like a template).
BOILERPLATE_TERM_SHARE = 0.5
TERMS_LEARNED_FROM = 20
LEARNED_FROM = 500  # issues of a tracker read to learn its boilerplate (spread over it)
TITLE_WEIGHT = 2  # a title names the problem; its terms count twice

# Headings of the common issue templates, English and Chinese (GitHub's defaults, Gitee's
# 【...】 sections), removed even where a tracker has too few issues to learn its own.
KNOWN_HEADINGS = frozenset(
    {
        "describe the bug",
        "bug description",
        "to reproduce",
        "steps to reproduce",
        "steps to reproduce the behavior",
        "reproduction",
        "expected behavior",
        "expected behaviour",
        "actual behavior",
        "environment",
        "system info",
        "system information",
        "additional context",
        "screenshots",
        "logs",
        "error log",
        "describe the current behavior",
        "describe the expected behavior",
        "question",
        "motivation",
        "your contribution",
        "问题描述",
        "环境",
        "环境信息",
        "复现步骤",
        "重现步骤",
        "预期结果",
        "期望结果",
        "实际结果",
        "日志信息",
        "相关日志",
        "截图",
        "软件环境",
        "硬件环境",
        "其他信息",
        "描述问题",
        "问题现象",
        "备注",
    }
)

# Chinese terms of ML bug reports and their English words (for reports posted in both languages).
GLOSSARY = {
    "报错": "error",
    "错误": "error",
    "异常": "exception",
    "内存": "memory",
    "显存": "memory",
    "溢出": "overflow",
    "不足": "out",
    "训练": "train",
    "推理": "inference",
    "模型": "model",
    "加载": "load",
    "失败": "fail",
    "安装": "install",
    "版本": "version",
    "量化": "quantize",
    "微调": "finetune",
    "分布式": "distributed",
    "多卡": "multi",
    "单卡": "single",
    "权重": "weight",
    "数据集": "dataset",
    "显卡": "gpu",
    "卡住": "hang",
    "卡死": "hang",
    "超时": "timeout",
    "保存": "save",
    "转换": "convert",
    "导出": "export",
    "编译": "compile",
    "精度": "precision",
    "损失": "loss",
    "梯度": "gradient",
    "学习率": "learning_rate",
    "批次": "batch",
    "分词器": "tokenizer",
    "文档": "doc",
    "支持": "support",
    "下载": "download",
    "断点": "checkpoint",
    "检查点": "checkpoint",
    "并行": "parallel",
    "流水线": "pipeline",
    "张量": "tensor",
    "算子": "operator",
    "性能": "performance",
    "速度": "speed",
    "慢": "slow",
    "找不到": "not_found",
    "不存在": "not_found",
    "无法": "cannot",
    "不一致": "mismatch",
    "形状": "shape",
    "维度": "dimension",
    "配置": "config",
    "参数": "parameter",
    "启动": "launch",
    "运行": "run",
}

# Words too common to tell reports apart ("out" is kept: "out of memory").
_ENGLISH_STOPWORDS = (
    "the a an and or but if of to in on at for with by from as is are was were be been being "
    "it its this that these those i me my we our you your he she they them their there here "
    "have has had do does did not no can could would should will shall may might must so than "
    "then when what which who how why all any some such only also just very too about into "
    "after before while up down over again am get got use using used"
)
ENGLISH_STOPWORDS = frozenset(_ENGLISH_STOPWORDS.split())
_CHINESE_STOPWORDS = (
    "的 了 是 在 我 有 和 就 不 也 都 这 那 与 及 或 "
    "一个 时候 使用 请问 如何 什么 为什么 吗 呢 啊 吧"
)
CHINESE_STOPWORDS = frozenset(_CHINESE_STOPWORDS.split())

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_LINK = re.compile(r"https?://\S+|www\.\S+")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Frames of Python, Java/JVM, C++/gdb, Rust and Go tracebacks, and the traceback headers.
_FRAME = re.compile(
    r"""^\s*(
        File\s+".*",\s+line\s+\d+ |
        at\s+[\w.$<>]+\(.*\) |
        \#\d+\s+0x[0-9a-f]+ |
        \d+:\s+0x[0-9a-f]+ |
        Traceback\s+\(most\s+recent\s+call\s+last\) |
        The\s+above\s+exception\s+was\s+the\s+direct\s+cause |
        During\s+handling\s+of\s+the\s+above\s+exception |
        \^+\s*$ |
        ~+\^*~*\s*$ |
        [\w/.-]+\.(py|go|rs|cc|cpp|h):\d+
    )""",
    re.VERBOSE | re.IGNORECASE,
)
# Log lines: a timestamp or a bracketed level at the start.
_LOG = re.compile(
    r"^\s*(\[?\d{4}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d|\[?(INFO|DEBUG|WARNING|WARN|TRACE)\b"
    r"|\[rank\d+\]|[IWE]\d{4} \d\d:\d\d)",
    re.IGNORECASE,
)
# Markdown and Chinese punctuation around a heading (full-width colons and brackets included)
_HEADING_MARKS = re.compile(r"^[\s#>*_\-\[\]【】:：|`.0-9、)(（）]+|[\s#*_\-\[\]【】:：|`]+$")  # noqa: RUF001
_TOKENS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)*|[\u3400-\u9fff]+")
_HAN = re.compile(r"[\u3400-\u9fff]")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+[a-z]*")


@dataclass(frozen=True)
class Report:
    """One issue as the index reads it: which tracker it is on, its title and its body."""

    key: int  # the item's id
    tracker: str  # host/owner/repo: the boilerplate is learned per tracker
    title: str
    body: str


# Template lines repeat in most of a tracker's issues, and stay in the cache; a line of one issue
# passes through. Bounded so that those do not fill a worker's memory (a 10x study's 387,420
# issues: issue 31); the same bound for words.
CACHED_LINES = 10_000
CACHED_WORDS = 30_000


@functools.lru_cache(maxsize=CACHED_LINES)
def line_key(line: str) -> str:
    """A line as template lines are compared: without Markdown marks, case or spacing."""
    return " ".join(_HEADING_MARKS.sub("", line).casefold().split())


def body_lines(body: str) -> Iterator[str]:
    """The body's lines that say something of this report: no comments, links, fence markers,
    quoted replies, stack frames or log lines."""
    after_frame = False  # a Python frame's next line is its source line: library code
    for line in _COMMENT.sub("", body or "").splitlines():
        if after_frame and line.startswith("    "):
            after_frame = False
            continue
        after_frame = bool(_FRAME.match(line))
        if after_frame or _LOG.match(line):
            continue
        if _FENCE.match(line) or line.lstrip().startswith(">"):
            continue
        line = _LINK.sub(" ", line).strip()
        if _TOKENS.search(line):  # a word in it, not only marks
            yield line


@dataclass
class Boilerplate:
    """What a tracker's issues all repeat: template lines and template words."""

    lines: frozenset[str]
    terms: frozenset[str]


def learn_boilerplate(
    reports: Iterable[Report], totals: Mapping[str, int] | None = None
) -> dict[str, Boilerplate]:
    """Per tracker, the lines and terms shared by a large share of its issues, read from at most
    LEARNED_FROM of them spread over the tracker (a template line in a third of the issues is in
    a third of the sample too; counting every distinct line of 38,742 issues took more memory
    than the rest of the index). `totals`, each tracker's number of reports, lets `reports` be a
    stream read once (a project's items from the database); without it they are counted here."""
    line_counts: dict[str, Counter[str]] = {}
    term_counts: dict[str, Counter[str]] = {}
    if totals is None:
        reports = list(reports)
        totals = Counter(report.tracker for report in reports)
    passed: Counter[str] = Counter()  # a tracker's reports gone by
    sizes: Counter[str] = Counter()  # a tracker's reports read
    for report in reports:
        stride = -(-totals[report.tracker] // LEARNED_FROM)  # ceil: 1 up to LEARNED_FROM
        passed[report.tracker] += 1
        if (passed[report.tracker] - 1) % stride:
            continue
        sizes[report.tracker] += 1
        keys = {line_key(line) for line in body_lines(report.body)}
        line_counts.setdefault(report.tracker, Counter()).update(keys)
        seen = set(terms_of(report.body, Boilerplate(frozenset(), frozenset())))
        term_counts.setdefault(report.tracker, Counter()).update(seen)
    learned = {}
    for tracker, size in sizes.items():
        line_floor = max(MIN_SHARED_LINE, BOILERPLATE_SHARE * size)
        lines = {k for k, n in line_counts[tracker].items() if n >= line_floor}
        terms: set[str] = set()
        if size >= TERMS_LEARNED_FROM:
            floor = BOILERPLATE_TERM_SHARE * size
            terms = {t for t, n in term_counts[tracker].items() if n > floor}
        learned[tracker] = Boilerplate(frozenset(lines), frozenset(terms))
    return learned


def terms_of(text: str, boilerplate: Boilerplate) -> list[str]:
    """The terms of `text`'s own lines (body_lines), in order, repeats kept."""
    out: list[str] = []
    for line in own_lines(text, boilerplate):
        out.extend(t for t in _terms(line) if t not in boilerplate.terms)
    return out


def own_lines(text: str, boilerplate: Boilerplate) -> Iterator[str]:
    """body_lines without the template's: what this report says in its own words."""
    for line in body_lines(text):
        key = line_key(line)
        if key not in KNOWN_HEADINGS and key not in boilerplate.lines:
            yield line


def report_terms(report: Report, boilerplate: Boilerplate) -> Counter[str]:
    """A report's term counts: its title's (weighted) and its body's own, each line's terms with
    the pairs of neighbouring terms (so "loss is nan" and "loss does not drop" differ in more
    than one word)."""
    counts: Counter[str] = Counter()
    title = list(_terms(report.title))
    for term in _with_pairs(title):
        counts[term] += TITLE_WEIGHT
    for line in own_lines(report.body, boilerplate):
        counts.update(_with_pairs([t for t in _terms(line) if t not in boilerplate.terms]))
    return counts


def _with_pairs(terms: list[str]) -> Iterator[str]:
    yield from terms
    for first, second in itertools.pairwise(terms):
        yield f"{first} {second}"


def _terms(text: str) -> Iterator[str]:
    for _start, _end, terms in spans(text):
        yield from terms


def spans(text: str) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """Each word of `text` with where it is and the terms it gives (the side-by-side view marks
    the words whose terms two reports share)."""
    for match in _TOKENS.finditer(text):
        token = match.group()
        if not _HAN.match(token):
            yield match.start(), match.end(), _english_terms(token)
            continue
        for offset, end, terms in _chinese_words(token):
            yield match.start() + offset, match.start() + end, terms


# Words and Chinese runs repeat across a project's issues: each is read once (a build spent
# most of its time re-reading the same words).
@functools.lru_cache(maxsize=CACHED_WORDS)
def _english_terms(token: str) -> tuple[str, ...]:
    """A word, or an identifier as one term and its parts (GenerationConfig, generation_config
    and generation config meet on "generationconfig", "generation" and "config")."""
    if token[0].isdigit():  # a number or a version: whole
        return (token,)
    parts = [p for p in _PARTS.findall(token) if p]
    terms = ["".join(parts).lower()] if len(parts) > 1 else []
    for part in parts:
        word = _stem(part.lower())
        if len(word) > 1 and word not in ENGLISH_STOPWORDS:
            terms.append(word)
    return tuple(terms)


@functools.cache
def _jieba():
    """A jieba segmenter of its own, made where a build first reads Chinese: its dictionary takes
    about 60 MB, which every web and worker process would otherwise hold (words_forgotten gives
    it back)."""
    import jieba

    jieba.setLogLevel(logging.WARNING)  # its dictionary loads once per segmenter and says so
    return jieba.Tokenizer()


def words_forgotten() -> None:
    """Give back what reading filled: the segmenter's dictionary and the caches of lines and
    words. A build calls it once its reports are read, before its arrays take their largest: at
    ten times the study the dictionary alone was a fifth of a worker's 300 MB (issue 31). The
    next read loads the dictionary again, in about a second, from jieba's cache file."""
    for cached in (_jieba, _chinese_words, _english_terms, line_key):
        cached.cache_clear()


@functools.lru_cache(maxsize=100_000)
def _chinese_words(run: str) -> tuple[tuple[int, int, tuple[str, ...]], ...]:
    """jieba's words of a run of Chinese characters: (start, end, terms) each."""
    out, start = [], 0
    for word in _jieba().lcut(run, HMM=False):
        terms = () if word in CHINESE_STOPWORDS else (_chinese_term(word),)
        out.append((start, start + len(word), terms))
        start += len(word)
    return tuple(out)


def _chinese_term(word: str) -> str:
    return _stem(GLOSSARY[word]) if word in GLOSSARY else word


def _stem(word: str) -> str:
    """Fold the commonest English endings (fails/failed/failing -> fail), no more: a stemmer's
    mistakes on identifiers would cost more than its gains."""
    if len(word) <= 4 or not word.isalpha():
        return word
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
