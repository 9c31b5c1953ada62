"""Ids made by SQL inside SQLite: idkit's loadable extension beside the extensions SQLite
users have, in one SQLite build (sqlean.py's, which carries sqlean's uuid7()), with
sqlite-ulid's extension and idkit's libidkit loaded into it.

    python sqlite_functions.py LIBIDKIT ROWS REPEATS OUT.csv

For each generator: the median time of one statement that makes ROWS ids (a recursive CTE,
`SELECT count(GEN) FROM c`), and the median of its differences from the statement alone,
each run timed right after one of the statement alone (2 * REPEATS + 1 runs: the
differences are tens of nanoseconds an id, the machine's drift between runs as much); the
median time to insert ROWS rows keyed by the id made in SQL, in one transaction, into a table of its own; the key's
index size (pages) and fill (dbstat); and the share of ids that come out above the one made
before them in one statement (1.0: in order); and the most ids a millisecond the
generator's layout allows (0: no such bound), which holds a statement of ROWS ids to at
least ROWS / that milliseconds whatever the generator costs. scripts/report.sh runs it; the
report generator reads OUT.csv.
"""

import csv
import os
import statistics
import sys
import tempfile
import time

import sqlean
import sqlite_ulid

LIB, ROWS, REPEATS, OUT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

# name, who makes it, the SQL, the key's column type, the most ids a millisecond its
# layout allows (Snowflake layouts: 2 ** sequence bits; 0 for none)
GENERATORS = [
    ("statement alone", "SQLite", "x", "INTEGER", 0),
    ("randomblob(16)", "SQLite", "randomblob(16)", "BLOB", 0),
    ("uuid7()", "sqlean", "uuid7()", "TEXT", 0),
    ("ulid()", "sqlite-ulid", "ulid()", "TEXT", 0),
    ("ulid_bytes()", "sqlite-ulid", "ulid_bytes()", "BLOB", 0),
    ("idkit_ulid()", "idkit", "idkit_ulid()", "BLOB", 0),
    ("idkit_ulid_text()", "idkit", "idkit_ulid_text()", "TEXT", 0),
    ("idkit_uuidv7()", "idkit", "idkit_uuidv7()", "BLOB", 0),
    ("idkit_uuidv7_text()", "idkit", "idkit_uuidv7_text()", "TEXT", 0),
    ("idkit_typeid('user')", "idkit", "idkit_typeid('user')", "TEXT", 0),
    # Twitter's layout: 12 sequence bits, 4,096 ids a millisecond.
    ("idkit_snowflake('twitter', 1)", "idkit", "idkit_snowflake('twitter', 1)", "INTEGER", 4096),
    # Mastodon's: 16 sequence bits, no worker id.
    ("idkit_snowflake('mastodon')", "idkit", "idkit_snowflake('mastodon')", "INTEGER", 65536),
]

COUNT = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows}) "
BASELINE = COUNT.format(rows=ROWS) + "SELECT count(x) FROM c"


def connect(path):
    con = sqlean.connect(path, isolation_level=None)
    con.enable_load_extension(True)
    sqlite_ulid.load(con)
    con.load_extension(LIB)
    con.execute("PRAGMA journal_mode=wal")
    con.execute("PRAGMA synchronous=normal")
    return con


def timed(con, sql):
    start = time.perf_counter()
    con.execute(sql).fetchall()
    return (time.perf_counter() - start) * 1000


def main():
    sqlean.extensions.enable_all()
    work = tempfile.mkdtemp(prefix="idkit-sqlite-functions-")
    con = connect(os.path.join(work, "statement.db"))
    rows = []
    for name, source, sql, kind, per_ms in GENERATORS:
        print(f"sqlite functions: {name}", file=sys.stderr, flush=True)
        statement = COUNT.format(rows=ROWS) + f"SELECT count({sql}) FROM c"
        # Each run beside a run of the statement alone, so that the machine's drift during
        # the whole measurement (clock speed, other work) falls out of the difference.
        timed(con, statement)
        runs, above = [], []
        for _ in range(2 * REPEATS + 1):
            base = timed(con, BASELINE)
            runs.append(timed(con, statement))
            # The statement alone is the baseline itself.
            above.append(0.0 if sql == "x" else runs[-1] - base)
        made = statistics.median(runs)
        sample = [r[0] for r in con.execute(COUNT.format(rows=100_000) + f"SELECT {sql} FROM c")]
        ordered = sum(b > a for a, b in zip(sample, sample[1:])) / (len(sample) - 1)
        inserts, pages, fill = [], 0, 0.0
        for i in range(REPEATS):
            path = os.path.join(work, f"insert-{len(rows)}-{i}.db")
            db = connect(path)
            key = "id INTEGER PRIMARY KEY" if kind == "INTEGER" else f"id {kind} PRIMARY KEY"
            db.execute(f"CREATE TABLE t ({key}, n INTEGER)")
            insert = COUNT.format(rows=ROWS) + f"INSERT INTO t (id, n) SELECT {sql}, x FROM c"
            start = time.perf_counter()
            db.execute("BEGIN")
            db.execute(insert)
            db.execute("COMMIT")
            inserts.append((time.perf_counter() - start) * 1000)
            # The key's b-tree: the table itself for an INTEGER PRIMARY KEY, its index
            # otherwise.
            tree = "t" if kind == "INTEGER" else "sqlite_autoindex_t_1"
            pages, used, size = db.execute(
                "SELECT count(*), sum(pgsize - unused), sum(pgsize) FROM dbstat WHERE name = ?",
                (tree,),
            ).fetchone()
            fill = used / size
            db.close()
            for suffix in ("", "-wal", "-shm", "-idkit"):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)
        rows.append(
            {
                "generator": name,
                "source": source,
                "stored_as": kind,
                "statement_ms": round(made, 1),
                "above_ms": statistics.median(above),
                "insert_ms": round(statistics.median(inserts), 1),
                "key_pages": pages,
                "key_fill": round(fill, 3),
                "in_order": round(ordered, 4),
                "per_ms_at_most": per_ms,
            }
        )
    for row in rows:
        per_ms = row.pop("per_ms_at_most")
        row["ns_per_id_above_statement"] = round(row.pop("above_ms") * 1e6 / ROWS, 1)
        row["ids"] = ROWS
        row["per_ms_at_most"] = per_ms
    with open(OUT, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    print(f"sqlite functions: SQLite {sqlean.sqlite_version}, {ROWS} ids, median of {REPEATS} "
          f"({2 * REPEATS + 1} for the statement's cost)",
          file=sys.stderr)


main()
