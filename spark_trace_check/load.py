"""Read JSONL and Parquet traces into Spark, number the rows, validate them and quarantine bad ones.

Validation runs in the JVM on Spark's VARIANT type (`try_parse_json`, `variant_get`,
`schema_of_variant`) and mirrors `traces/event.schema.json` rule by rule, so that the Spark job and the
pure-Python reader (`traces.io`) quarantine the same rows for the same field (requirement TR-005).
JSONL line numbers are recovered without a single-partition sort: rows are counted per (file, block),
and each block's offset is the sum of the blocks before it in that file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from traces.io import TraceFileError, check_parquet_schema, expand_paths
from traces.schema import FIELD_NAMES, KIND_PATTERN, MECHANISMS, SCHEMA_VERSION

_INT = r"(BIGINT|INT|SMALLINT|TINYINT|DECIMAL\(\d+,0\))"
_ATTR_TYPE = rf"(STRING|{_INT}|BOOLEAN|VOID|ARRAY<(STRING|{_INT}|VOID)>)"
_KEY = r"([A-Za-z0-9_]+|`[^`]*`)"
_ATTRS_OBJECT = rf"OBJECT<({_KEY}: {_ATTR_TYPE}(, {_KEY}: {_ATTR_TYPE})*)?>"
ATTRS_SCHEMA_RE = rf"^{_ATTRS_OBJECT}$"
# The whole row in one pattern over schema_of_variant (object keys come out sorted): the fast path.
_SMALL_INT = r"(BIGINT|INT|SMALLINT|TINYINT)"
ROW_SCHEMA_RE = (rf"^OBJECT<attrs: {_ATTRS_OBJECT}, entity: STRING, event_id: STRING, kind: STRING, "
                 rf"mechanism: STRING, node: STRING, schema_version: {_SMALL_INT}, seq: {_SMALL_INT}, "
                 rf"trace_id: STRING, ts_ms: {_SMALL_INT}>$")
LONG_MAX = 2**63 - 1



def _lit(text: str) -> str:
    """A Spark SQL string literal (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# (field, expected JSON type, extra check as SQL over the variant `x`, reason when the check fails)
_STRING_NONEMPTY = ("length(variant_get(x, '$', 'string')) >= 1", "must be a non-empty string")
FIELD_RULES: tuple[tuple[str, str, str, str], ...] = (
    ("attrs", "object", f"schema_of_variant(x) rlike {_lit(ATTRS_SCHEMA_RE)}",
     "attribute values must be strings, integers, booleans, null, or arrays of strings or of integers"),
    ("entity", "string", "true", ""),
    ("event_id", "string", *_STRING_NONEMPTY),
    ("kind", "string", f"variant_get(x, '$', 'string') rlike {_lit(KIND_PATTERN)}", f"must match {KIND_PATTERN}"),
    ("mechanism", "string", "variant_get(x, '$', 'string') in ({})".format(", ".join(f"'{m}'" for m in MECHANISMS)),
     f"must be one of {list(MECHANISMS)}"),
    ("node", "string", *_STRING_NONEMPTY),
    ("schema_version", "integer", f"variant_get(x, '$', 'bigint') = {SCHEMA_VERSION}", f"must be {SCHEMA_VERSION}"),
    ("seq", "integer", "variant_get(x, '$', 'decimal(38,0)') >= 0", "must be >= 0"),
    ("trace_id", "string", *_STRING_NONEMPTY),
    ("ts_ms", "integer", "variant_get(x, '$', 'decimal(38,0)') >= 0", "must be >= 0"),
)
FIELD_ORDER = tuple(name for name, *_ in FIELD_RULES)
_TYPE_SQL = {
    "object": "schema_of_variant(x) like 'OBJECT<%'",
    "string": "schema_of_variant(x) = 'STRING'",
    "integer": f"schema_of_variant(x) rlike {_lit('^' + _INT + '$')}",
}


@dataclass
class Loaded:
    """Validated rows (`events`) and quarantined rows (`quarantine`), both with file and line."""

    events: DataFrame
    quarantine: DataFrame
    files: list[str]


def _missing(name: str) -> Column:
    return F.when(F.expr(f"variant_get(v, '$.{name}') is null"),
                  F.struct(F.lit(name).alias("field"), F.lit("required field is missing").alias("reason")))


def _invalid(name: str, json_type: str, check: str, reason: str) -> Column:
    """SQL that yields (field, reason) when a present field has the wrong type or value, else null."""
    x = f"variant_get(v, '$.{name}')"
    type_ok = _TYPE_SQL[json_type].replace("(x)", f"({x})")
    check_sql = check.replace("(x)", f"({x})").replace("(x,", f"({x},")
    fits = f"variant_get({x}, '$', 'decimal(38,0)') <= {LONG_MAX}" if json_type == "integer" else "true"
    return F.expr(
        f"case when {x} is null then null "
        f"when not ({type_ok}) then named_struct('field', '{name}', 'reason', "
        f"concat('expected {json_type}, found ', lower(schema_of_variant({x})))) "
        f"when not ({fits}) then named_struct('field', '{name}', 'reason', 'out of 64-bit range') "
        f"when not ({check_sql}) then named_struct('field', '{name}', 'reason', {_lit(reason)}) end"
    )


def validate(raw: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Split rows (`value` JSON text, `file`, `line`) into typed events and quarantined rows.

    Neither is persisted here: persisting the parsed VARIANT column costs more than parsing twice;
    the caller persists the narrow, typed events it reuses."""
    allowed = "array({})".format(", ".join(f"'{n}'" for n in sorted(FIELD_ORDER)))
    checks = [
        F.when(F.col("v").isNull(), F.struct(F.lit("").alias("field"), F.lit("not valid JSON").alias("reason"))),
        F.when(~F.expr("schema_of_variant(v) like 'OBJECT<%'"),
               F.struct(F.lit("").alias("field"),
                        F.concat(F.lit("row is a JSON "), F.expr("lower(schema_of_variant(v))"),
                                 F.lit(", expected an object")).alias("reason"))),
    ]
    unknown = F.expr(f"array_sort(array_except(json_object_keys(value), {allowed}))")
    unknown_problem = F.struct(unknown[0].alias("field"), F.lit("unknown field").alias("reason"))
    checks.append(F.when(F.size(unknown) > 0, unknown_problem))
    checks += [_missing(name) for name in FIELD_ORDER]
    checks += [_invalid(*rule) for rule in FIELD_RULES]
    mechanisms = ", ".join(f"'{m}'" for m in MECHANISMS)
    fast_ok = F.expr(
        f"v is not null and schema_of_variant(v) rlike {_lit(ROW_SCHEMA_RE)} "
        f"and variant_get(v, '$.schema_version', 'int') = {SCHEMA_VERSION} "
        "and variant_get(v, '$.seq', 'bigint') >= 0 and variant_get(v, '$.ts_ms', 'bigint') >= 0 "
        "and length(variant_get(v, '$.trace_id', 'string')) > 0 "
        "and length(variant_get(v, '$.event_id', 'string')) > 0 "
        "and length(variant_get(v, '$.node', 'string')) > 0 "
        f"and variant_get(v, '$.mechanism', 'string') in ({mechanisms}) "
        f"and variant_get(v, '$.kind', 'string') rlike {_lit(KIND_PATTERN)}"
    )
    df = raw.withColumn("v", F.expr("try_parse_json(value)"))
    # First problem in a fixed order shared with traces.io.validate_row: not JSON, not an object,
    # unknown field, missing fields, then wrong types or values, fields in alphabetical order.
    # Valid rows take the one-pattern fast path; only the others pay for the field-by-field diagnosis.
    diagnose = F.coalesce(*checks)
    df = df.withColumn("problem", F.when(fast_ok, F.lit(None)).otherwise(diagnose))
    good = df.where(F.col("problem").isNull()).select(
        F.expr("variant_get(v, '$.schema_version', 'int')").alias("schema_version"),
        F.expr("variant_get(v, '$.trace_id', 'string')").alias("trace_id"),
        F.expr("variant_get(v, '$.seq', 'bigint')").alias("seq"),
        F.expr("variant_get(v, '$.event_id', 'string')").alias("event_id"),
        F.expr("variant_get(v, '$.ts_ms', 'bigint')").alias("ts_ms"),
        F.expr("variant_get(v, '$.node', 'string')").alias("node"),
        F.expr("variant_get(v, '$.mechanism', 'string')").alias("mechanism"),
        F.expr("variant_get(v, '$.entity', 'string')").alias("entity"),
        F.expr("variant_get(v, '$.kind', 'string')").alias("kind"),
        F.expr("to_json(variant_get(v, '$.attrs'))").alias("attrs"),
        "file", "line", "file_rank",
    )
    bad = df.where(F.col("problem").isNotNull()).select(
        "file", "line", F.col("problem.field").alias("field"), F.col("problem.reason").alias("reason"),
        F.substring("value", 1, 2000).alias("raw"),
    )
    return good, bad


def _jsonl_rows(spark: SparkSession, files: list[str]) -> DataFrame:
    raw = spark.read.text(files).select(
        F.regexp_replace("value", "^\ufeff", "").alias("value"),
        F.col("_metadata.file_path").alias("uri"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("mid"),
    )
    blocks = raw.groupBy("uri", "block").agg(F.count(F.lit(1)).alias("n"), F.min("mid").alias("first_mid"))
    w = Window.partitionBy("uri").orderBy("block").rowsBetween(Window.unboundedPreceding, -1)
    offsets = blocks.withColumn("offset", F.coalesce(F.sum("n").over(w), F.lit(0)))
    rows = raw.join(F.broadcast(offsets.select("uri", "block", "first_mid", "offset")), ["uri", "block"])
    rows = rows.withColumn("line", F.col("offset") + F.col("mid") - F.col("first_mid") + 1)
    return rows.where(F.trim("value") != "").select("value", "uri", "line")


def _parquet_rows(spark: SparkSession, files: list[str]) -> DataFrame:
    return spark.read.parquet(*files).select(
        *FIELD_NAMES, F.col("_metadata.file_path").alias("uri"), (F.col("_metadata.row_index") + 1).alias("line"))


def validate_columns(df: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Parquet rows are typed already: check nulls and values column by column, in the same order as
    `validate` (missing fields, then wrong values, alphabetical), with no JSON round trip."""
    mechanisms = ", ".join(f"'{m}'" for m in MECHANISMS)

    def problem(cond: str, name: str, reason: str) -> Column:
        return F.when(F.expr(cond), F.struct(F.lit(name).alias("field"), F.lit(reason).alias("reason")))

    a = "try_parse_json(attrs)"
    invalid = [
        problem(f"{a} is null", "attrs", "not valid JSON"),
        problem(f"not (schema_of_variant({a}) like 'OBJECT<%')", "attrs", "expected object"),
        problem(f"not (schema_of_variant({a}) rlike {_lit(ATTRS_SCHEMA_RE)})", "attrs", dict(
            (r[0], r[3]) for r in FIELD_RULES)["attrs"]),
        problem("length(event_id) = 0", "event_id", "must be a non-empty string"),
        problem(f"not (kind rlike {_lit(KIND_PATTERN)})", "kind", f"must match {KIND_PATTERN}"),
        problem(f"mechanism not in ({mechanisms})", "mechanism", f"must be one of {list(MECHANISMS)}"),
        problem("length(node) = 0", "node", "must be a non-empty string"),
        problem(f"schema_version != {SCHEMA_VERSION}", "schema_version", f"must be {SCHEMA_VERSION}"),
        problem("seq < 0", "seq", "must be >= 0"),
        problem("length(trace_id) = 0", "trace_id", "must be a non-empty string"),
        problem("ts_ms < 0", "ts_ms", "must be >= 0"),
    ]
    missing = [problem(f"{name} is null", name, "required field is missing") for name in FIELD_ORDER]
    df = df.withColumn("problem", F.coalesce(*missing, *invalid))
    good = df.where(F.col("problem").isNull()).select(
        F.col("schema_version").cast("int"), "trace_id", F.col("seq").cast("bigint"), "event_id",
        F.col("ts_ms").cast("bigint"), "node", "mechanism", "entity", "kind", "attrs", "file", "line", "file_rank")
    bad = df.where(F.col("problem").isNotNull()).select(
        "file", "line", F.col("problem.field").alias("field"), F.col("problem.reason").alias("reason"),
        F.substring(F.to_json(F.struct(*FIELD_NAMES)), 1, 2000).alias("raw"))
    return good, bad


def _with_files(spark: SparkSession, raw: DataFrame, files: list[str]) -> DataFrame:
    """Name each row's file as the user gave it, and rank files in the order they were given."""
    rank = spark.createDataFrame([(Path(f).as_uri(), i, f) for i, f in enumerate(files)],
                                 "uri_key string, file_rank int, file string")
    raw = raw.withColumn("uri_key", F.expr("regexp_replace(uri, '^file:/+', 'file:///')"))
    raw = raw.join(F.broadcast(rank), "uri_key", "left").withColumn("file", F.coalesce("file", "uri"))
    return raw.withColumn("file_rank", F.coalesce("file_rank", F.lit(len(files))))


def load(spark: SparkSession, paths: list[str]) -> Loaded:
    """Read every trace file under `paths`; raise TraceFileError when the input is unusable."""
    files = [str(p.resolve()) for p in expand_paths(paths)]
    if not files:
        raise TraceFileError(f"no trace files (.jsonl, .ndjson, .parquet) under {', '.join(paths)}")
    jsonl = [f for f in files if not f.endswith(".parquet")]
    parquet = [f for f in files if f.endswith(".parquet")]
    goods, bads = [], []
    if jsonl:
        good, bad = validate(_with_files(spark, _jsonl_rows(spark, jsonl), files))
        goods.append(good)
        bads.append(bad)
    if parquet:
        for f in parquet:  # footers only, so that a file with wrong columns is named before Spark reads
            check_parquet_schema(f)
        good, bad = validate_columns(_with_files(spark, _parquet_rows(spark, parquet), files))
        goods.append(good)
        bads.append(bad)
    good, bad = goods[0], bads[0]
    if len(goods) > 1:
        good, bad = good.unionByName(goods[1]), bad.unionByName(bads[1])
    return Loaded(good, bad, files)
