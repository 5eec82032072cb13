"""Read JSONL (plain or gzip) and Parquet traces into Spark, number the rows, validate them, quarantine.

One definition of a valid row (`traces.rows`) serves both engines. The JVM accepts on its own only the
rows that are valid beyond doubt: UTF-8, no deeper than `MAX_DEPTH`, canonical JSON (the parsed value
printed back has the very length of the line, which rules out trailing data, spaces and escapes), every
field of the right type and value, integers within 64 bits. Every other row goes, as raw bytes, to the
Python function the pure-Python engine runs (`check_line` / `check_typed_row`): it quarantines the bad
ones with the same field and reason, and returns the good ones typed. Common input never leaves the JVM.

Paths are never handed to Spark as the user wrote them: Spark would expand `[`, `*`, `?` as patterns and
take `a:b` for a URI scheme. The files found by `traces.io.discover` are linked under numbered names in a
staging directory; the number in the name is the file's rank, which maps rows back to the name the user
wrote. JSONL line numbers are recovered without a single-partition sort: rows are counted per (file,
block), and each block's offset is the sum of the blocks before it in that file.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from traces.io import Discovery, TraceFile, TraceFileError, check_parquet_schema, discover
from traces.rows import MAX_DEPTH, check_line, check_typed_row
from traces.schema import FIELD_NAMES, KIND_PATTERN, MECHANISMS, SCHEMA_VERSION, canonical_attrs

FAST_MAX_CHARS = 1_000_000  # longer lines go to the Python path (Spark's JSON parser caps string length)
_INT = r"(BIGINT|INT|SMALLINT|TINYINT)"
_ATTR_TYPE = rf"(STRING|{_INT}|BOOLEAN|VOID|ARRAY<(STRING|{_INT}|VOID)>)"
_KEY = r"([A-Za-z0-9_]+|`[^`]*`)"
ATTRS_RE = rf"OBJECT<({_KEY}: {_ATTR_TYPE}(, {_KEY}: {_ATTR_TYPE})*)?>"
ROW_RE = (
    rf"^OBJECT<attrs: {ATTRS_RE}, entity: STRING, event_id: STRING, kind: STRING, "
    rf"mechanism: STRING, node: STRING, schema_version: {_INT}, seq: {_INT}, "
    rf"trace_id: STRING, ts_ms: {_INT}>$"
)
STRING_FIELDS = ("trace_id", "event_id", "node", "mechanism", "entity", "kind", "attrs")
INT_FIELDS = ("schema_version", "seq", "ts_ms")
_JUDGED_DDL = (
    "field string, reason string, schema_version int, trace_id string, seq bigint, event_id string, "
    "ts_ms bigint, node string, mechanism string, entity string, kind string, attrs string"
)
_TYPED = _JUDGED_DDL.split(", ")[2:]


def _lit(text: str) -> str:
    """A Spark SQL string literal (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class Part:
    """The rows of one kind of input screened in the JVM: `screened` holds the schema's columns typed (valid
    on rows with `fast` true), `file_rank`, `line`, `fast`, and the raw inputs of the Python judgement
    (null on fast rows); `judge` is that judgement, a struct of `_JUDGED_DDL`, over the raw inputs."""

    screened: DataFrame
    judge: Column

    def fast_rows(self) -> DataFrame:
        return self.screened.where("fast").select(
            *FIELD_NAMES,
            "file_rank",
            "line",
            F.lit(None).cast("string").alias("field"),
            F.lit(None).cast("string").alias("reason"),
        )

    def judged_rows(self) -> DataFrame:
        """The rows the fast path did not accept, judged by the Python row definition (typed or quarantined).
        The judgement is marked nondeterministic so that the optimiser cannot push a filter on its result
        below the `not fast` filter (it did once: the Python judgement then ran on every row)."""
        judged = self.screened.where("not fast").select(self.judge.alias("j"), "file_rank", "line")
        return judged.select(
            *[F.col(f"j.{n}").alias(n) for n in FIELD_NAMES],
            "file_rank",
            "line",
            F.col("j.field").alias("field"),
            F.col("j.reason").alias("reason"),
        )


@dataclass
class Loaded:
    """Every row screened in the JVM (`parts`), then judged: `validated` has the schema's columns, `file_rank`,
    `line`, `field`, `reason` (null when valid); `events` are its valid rows, `quarantine` the others.

    The job persists the screened rows (`persist`), counts the rows the fast path accepted, and only when
    some were not does any row reach Python (`judge_slow`, also persisted): so each row is screened once,
    judged at most once, and a corpus that is valid beyond doubt never starts a Python worker to validate."""

    parts: list[Part]
    files: list[str]  # names as the user wrote them, by rank
    skipped: list[dict[str, str]] = field(default_factory=list)
    _jsonl_lines: DataFrame | None = None  # the JSONL files' non-blank lines, read on their own (`value`)
    _parquet_rows: int = 0
    jsonl_bytes: int = 0  # on disk (compressed files counted 8 times): sizes the shuffles before any count
    slow: DataFrame | None = None  # the judged rows the fast path did not accept (None: not judged yet)
    all_fast: bool = False  # set by `judge_slow` when every row passed the fast path

    def persist(self) -> None:
        for part in self.parts:
            part.screened = part.screened.persist()

    def unpersist(self) -> None:
        for part in self.parts:
            part.screened.unpersist()
        if self.slow is not None:
            self.slow.unpersist()

    @property
    def screened(self) -> DataFrame:
        """`fast` and, on fast rows, `mechanism`, of every row."""
        return _union(
            [
                p.screened.select("fast", F.when(F.col("fast"), F.col("mechanism")).alias("mechanism"))
                for p in self.parts
            ]
        )

    def judge_slow(self, slow_rows: int) -> DataFrame | None:
        """Judge the `slow_rows` rows the fast path did not accept (persisted); None when there are none."""
        self.all_fast = slow_rows == 0
        if not self.all_fast:
            self.slow = _union([p.judged_rows() for p in self.parts]).persist()
        return self.slow

    @property
    def validated(self) -> DataFrame:
        fast = _union([p.fast_rows() for p in self.parts])
        if self.all_fast:
            return fast
        return fast.unionByName(self.slow if self.slow is not None else _union([p.judged_rows() for p in self.parts]))

    @property
    def events(self) -> DataFrame:
        return self.validated.where("field is null").drop("field", "reason")

    @property
    def quarantine(self) -> DataFrame:
        return self.validated.where("field is not null").select("file_rank", "line", "field", "reason")

    def counts(self) -> DataFrame:
        """One aggregation for three counts taken independently: `what` = 'read' counts the JSONL files'
        non-blank lines (a plain scan of their own; Parquet rows come from the footers, `parquet_rows`),
        `what` = 'screen' counts the screened rows by `fast` and (fast rows) `mechanism`."""
        frames = [self.screened.select(F.lit("screen").alias("what"), "fast", "mechanism")]
        if self._jsonl_lines is not None:
            frames.append(
                self._jsonl_lines.select(
                    F.lit("read").alias("what"),
                    F.lit(None).cast("boolean").alias("fast"),
                    F.lit(None).cast("string").alias("mechanism"),
                )
            )
        return _union(frames).groupBy("what", "fast", "mechanism").count()

    @property
    def parquet_rows(self) -> int:
        return self._parquet_rows

    def rows_estimate(self) -> int:
        """Rows before counting: Parquet footers, and JSONL at about 100 bytes a line (an overestimate)."""
        return self._parquet_rows + self.jsonl_bytes // 100


def _union(frames: list[DataFrame]) -> DataFrame:
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def _judgement(row: dict | None, problem) -> tuple:
    if problem is not None:
        return (problem.field, problem.reason, *([None] * len(_TYPED)))
    assert row is not None
    return (
        None,
        None,
        row["schema_version"],
        row["trace_id"],
        row["seq"],
        row["event_id"],
        row["ts_ms"],
        row["node"],
        row["mechanism"],
        row["entity"],
        row["kind"],
        canonical_attrs(row["attrs"]),
    )


def _judge_line(raw: bytes, line: int) -> tuple:
    return _judgement(*check_line(bytes(raw), first_line=line == 1))


def _judge_cells(*values) -> tuple:
    *cells, extra = values
    row = dict(zip((*STRING_FIELDS, *INT_FIELDS), cells, strict=True))
    if extra is not None:
        row[extra] = True  # a column outside the schema holds a value here
    return _judgement(*check_typed_row(row))


def _screen(df: DataFrame, fast_ok: Column, typed_fast: list[Column], raw: list[Column], judge) -> Part:
    """Screen every row in the JVM: rows passing `fast_ok` are typed there; the raw inputs of the others are
    kept for the Python row definition (`judge`, applied to the `raw` columns by `Part.judged_rows`)."""
    fast = F.coalesce(fast_ok, F.lit(False))
    df = df.withColumn("fast", fast)
    # the typed values only where the fast path accepted the row (elsewhere a cast could fail); CASE
    # evaluates only the branch it takes
    typed = [F.when(F.col("fast"), c).alias(n) for n, c in zip(FIELD_NAMES, typed_fast, strict=True)]
    raw_cols = [F.when(~F.col("fast"), c).alias(f"raw{i}") for i, c in enumerate(raw)]
    screened = df.select(*typed, "file_rank", "line", "fast", *raw_cols)
    return Part(screened, judge(*[F.col(f"raw{i}") for i in range(len(raw))]))


def _fast_values(get) -> str:
    """SQL: every field value is in range (types already checked); `get(name, type)` reads one field."""
    mechanisms = ", ".join(f"'{m}'" for m in MECHANISMS)
    return (
        f"{get('schema_version', 'int')} = {SCHEMA_VERSION} and {get('seq', 'bigint')} >= 0 "
        f"and {get('ts_ms', 'bigint')} >= 0 and length({get('trace_id', 'string')}) > 0 "
        f"and length({get('event_id', 'string')}) > 0 and length({get('node', 'string')}) > 0 "
        f"and {get('mechanism', 'string')} in ({mechanisms}) "
        f"and {get('kind', 'string')} rlike {_lit(KIND_PATTERN)}"
    )


def _plain_json(text: str) -> str:
    """SQL: `text` is short, valid UTF-8 and has few brackets, so that Spark's parser may see it safely."""
    return (
        f"is_valid_utf8({text}) and length({text}) <= {FAST_MAX_CHARS} "
        f"and length({text}) - length(translate({text}, '[{{', '')) <= {MAX_DEPTH}"
    )


def validate_jsonl(rows: DataFrame) -> Part:
    """Rows (`value`, `file_rank`, `line`) -> every row screened (see `_screen`)."""
    # a CR before the line feed (Windows line ends) is JSON white space: the fast path looks past it
    df = rows.withColumn(
        "text", F.expr("case when endswith(value, '\\r') then substr(value, 1, length(value) - 1) else value end")
    )
    df = df.withColumn(
        "v",
        F.expr(
            f"case when {_plain_json('value')} and not (line = 1 and startswith(value, '\ufeff')) "
            "then try_parse_json(text) end"
        ),
    )
    fast_ok = F.expr(
        f"v is not null and length(to_json(v)) = length(text) "
        f"and schema_of_variant(v) rlike {_lit(ROW_RE)} and "
        + _fast_values(lambda n, t: f"variant_get(v, '$.{n}', '{t}')")
    )
    types = {"schema_version": "int", "seq": "bigint", "ts_ms": "bigint"}
    typed = [
        F.expr("to_json(variant_get(v, '$.attrs'))")
        if n == "attrs"
        else F.expr(f"variant_get(v, '$.{n}', '{types.get(n, 'string')}')")
        for n in FIELD_NAMES
    ]
    judge = F.udf(_judge_line, _JUDGED_DDL, useArrow=True).asNondeterministic()
    return _screen(df, fast_ok, typed, [F.col("value").cast("binary"), F.col("line")], judge)


def validate_parquet(df: DataFrame, extras: list[str]) -> Part:
    """Typed Parquet rows (the schema's columns, `extras`, `file_rank`, `line`) -> every row screened."""
    extra = F.coalesce(*[F.when(F.col(f"`{x}`").isNotNull(), F.lit(x)) for x in sorted(extras)], F.lit(None))
    df = df.withColumn("extra_field", extra.cast("string"))
    utf8 = " and ".join(f"is_valid_utf8({c})" for c in STRING_FIELDS)
    present = " and ".join(f"{c} is not null" for c in (*STRING_FIELDS, *INT_FIELDS))
    df = df.withColumn(
        "v",
        F.expr(
            f"case when {present} and extra_field is null and {utf8} "
            f"and {_plain_json('attrs')} then try_parse_json(attrs) end"
        ),
    )
    fast_ok = F.expr(
        f"v is not null and length(to_json(v)) = length(attrs) "
        f"and schema_of_variant(v) rlike {_lit('^' + ATTRS_RE + '$')} and " + _fast_values(lambda n, t: n)
    )
    typed = {"schema_version": F.col("schema_version").cast("int")} | {
        n: F.col(n).cast("bigint") for n in ("seq", "ts_ms")
    }
    cells = [F.col(c).cast("binary") for c in STRING_FIELDS] + [F.col(c).cast("bigint") for c in INT_FIELDS]
    judge = F.udf(_judge_cells, _JUDGED_DDL, useArrow=True).asNondeterministic()
    return _screen(df, fast_ok, [typed.get(n, F.col(n)) for n in FIELD_NAMES], [*cells, F.col("extra_field")], judge)


def _rank() -> Column:
    return F.regexp_extract(F.col("_metadata.file_path"), r"/([0-9]+)\.[^/]*$", 1).cast("int")


def jsonl_rows(spark: SparkSession, staged: list[str]) -> DataFrame:
    """Non-blank lines (`value`, `file_rank`, `line`); `lineSep` is `\\n` alone, as in the Python reader."""
    raw = (
        spark.read.option("lineSep", "\n")
        .text(staged)
        .select(
            "value",
            _rank().alias("file_rank"),
            F.col("_metadata.file_block_start").alias("block"),
            F.monotonically_increasing_id().alias("mid"),
        )
    )
    blocks = raw.groupBy("file_rank", "block").agg(F.count(F.lit(1)).alias("n"), F.min("mid").alias("first_mid"))
    w = Window.partitionBy("file_rank").orderBy("block").rowsBetween(Window.unboundedPreceding, -1)
    offsets = blocks.withColumn("offset", F.coalesce(F.sum("n").over(w), F.lit(0)))
    rows = raw.join(F.broadcast(offsets.select("file_rank", "block", "first_mid", "offset")), ["file_rank", "block"])
    rows = rows.withColumn("line", F.col("offset") + F.col("mid") - F.col("first_mid") + 1)
    return rows.where(~_blank()).select("value", "file_rank", "line")


def _blank() -> Column:
    return F.col("value").rlike(r"^[ \t\r]*$")


def jsonl_lines(spark: SparkSession, staged: list[str]) -> DataFrame:
    """The non-blank lines alone, without numbering: what the files hold, counted apart from the rows judged."""
    return spark.read.option("lineSep", "\n").text(staged).where(~_blank())


def _spark_schema(schemas: list[pa.Schema]):
    """The Spark schema of Parquet files that all have one Arrow schema (their footers, already read), so
    that Spark runs no job to infer it; None (Spark infers) when they differ or a type has no Spark twin."""
    if any(not other.equals(schemas[0]) for other in schemas[1:]):
        return None
    try:
        from pyspark.sql.pandas.types import from_arrow_schema

        return from_arrow_schema(schemas[0])
    except (TypeError, ValueError, NotImplementedError):
        return None


def parquet_rows(spark: SparkSession, staged: list[str], extras: list[str], schemas: list | None = None) -> DataFrame:
    schema = _spark_schema(schemas) if schemas else None
    reader = spark.read.schema(schema) if schema is not None else spark.read
    return reader.parquet(*staged).select(
        *FIELD_NAMES,
        *[F.col(f"`{x}`") for x in extras],
        _rank().alias("file_rank"),
        (F.col("_metadata.row_index") + 1).alias("line"),
    )


def _verify_gzip(tf: TraceFile) -> None:
    """Spark would fail mid-job on corrupt compressed data: find it first, naming the file."""
    try:
        with gzip.open(tf.path, "rb") as handle:
            while handle.read(1 << 20):
                pass
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceFileError(f"{tf.name}: compressed data is corrupt or truncated: {exc}") from exc


def stage(found: Discovery, stage_dir: str) -> Iterator[tuple[int, TraceFile, str]]:
    """Link each file under a numbered name: (rank, file, staged path)."""
    for rank, tf in enumerate(found.files):
        staged = os.path.join(stage_dir, f"{rank:07d}.{tf.kind}")
        os.symlink(os.path.abspath(tf.path), staged)
        yield rank, tf, staged


def load(spark: SparkSession, paths: list[str], stage_dir: str) -> Loaded:
    """Read every trace file under `paths`; raise TraceFileError when the input is unusable."""
    found = discover(paths)
    jsonl: list[str] = []
    parquet: dict[tuple[str, ...], list[str]] = {}  # files grouped by their extra columns
    schemas: dict[tuple[str, ...], list[pa.Schema]] = {}
    parquet_rows_total = jsonl_bytes = 0
    for _rank_no, tf, staged in stage(found, stage_dir):
        if tf.kind == "parquet":
            schema = check_parquet_schema(tf.path, tf.name)
            extras = tuple(sorted(n for n in schema.names if n not in FIELD_NAMES))
            parquet.setdefault(extras, []).append(staged)
            schemas.setdefault(extras, []).append(schema)
            parquet_rows_total += pq.ParquetFile(tf.path).metadata.num_rows
        else:
            if tf.kind == "jsonl.gz":
                _verify_gzip(tf)
            jsonl_bytes += os.path.getsize(tf.path) * (8 if tf.kind == "jsonl.gz" else 1)
            jsonl.append(staged)
    frames = []
    lines = None
    if jsonl:
        lines = jsonl_lines(spark, jsonl)
        frames.append(validate_jsonl(jsonl_rows(spark, jsonl)))
    for extras, staged_files in parquet.items():
        rows = parquet_rows(spark, staged_files, list(extras), schemas[extras])
        frames.append(validate_parquet(rows, list(extras)))
    if not frames:
        frames.append(validate_jsonl(spark.createDataFrame([], "value string, file_rank int, line bigint")))
    return Loaded(frames, [tf.name for tf in found.files], found.skipped, lines, parquet_rows_total, jsonl_bytes)
