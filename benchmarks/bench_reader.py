"""The reader alone (issue 32): CPU microseconds per event of `traces.io.iter_parquet` over a corpus's Parquet
files, and what the attrs check's canonical round trip costs on its own.

    python benchmarks/bench_reader.py /tmp/f1m                 # a corpus of benchmarks/corpus.py
    python benchmarks/bench_reader.py /tmp/f1m --repeat 5

Each figure is the least CPU time (`time.process_time`: the machine is shared) of `--repeat` runs, with the
cyclic collector paused as the engine pauses it (`conformance.engine.collector`). `read`: every file read and
judged into events (`iter_parquet`: the batch's column checks, attrs parsed once per distinct text of a batch,
one `Event` per row). `attrs`: the distinct attrs texts of every batch (what the reader parses), each decoded
by msgspec alone (`decode`), and decoded, encoded back and compared (`round trip`, `traces.columnar`'s
canonical check): their difference is the check's own cost; `plain_attrs`: the whole judgement of a text as the
reader makes it (session 14: the canonical path without the scan's pre-checks). Figures, never a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_event_cost import best
from traces import columnar
from traces.io import TraceFile, iter_parquet


def read(files: list[Path]) -> int:
    n = 0
    for f in files:
        for part in iter_parquet(TraceFile(str(f), str(f), "parquet")):
            n += len(part.events)
    return n


def texts(files: list[Path]) -> list[bytes]:
    """The distinct attrs texts of every batch, as the reader parses them."""
    out: list[bytes] = []
    for f in files:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=65_536):
            out.extend(pc.dictionary_encode(batch.column("attrs")).dictionary.cast(pa.binary()).to_pylist())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="a directory of Parquet trace files (benchmarks/corpus.py)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = sorted(Path(args.corpus).glob("*.parquet"))
    seconds, events = best(args.repeat, lambda: read(files))
    print(f"read: {events} events, {seconds:.3f} CPU s, {seconds / events * 1e6:.3f} us/event")
    distinct = texts(files)
    decode, encode = columnar._decode, columnar._encode
    alone, _ = best(args.repeat, lambda: [decode(t) for t in distinct])
    values = [decode(t) for t in distinct]
    both, _ = best(args.repeat, lambda: [encode(v) == t for v, t in zip(values, distinct, strict=True)])
    whole, _ = best(args.repeat, lambda: list(map(columnar.plain_attrs, distinct)))
    per = len(distinct) / events
    print(f"attrs: {len(distinct)} distinct texts of the batches ({per:.3f} per event)")
    print(
        f"  decode: {alone / len(distinct) * 1e9:.0f} ns/text; round trip's own (encode, compare): "
        f"{both / len(distinct) * 1e9:.0f} ns/text = {both / events * 1e6:.3f} us/event"
    )
    print(f"  plain_attrs (the reader's whole judgement of a text): {whole / len(distinct) * 1e9:.0f} ns/text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
