"""The Django and SQLAlchemy recipes of docs/recipes/python-orms.md, run as
written against the real PostgreSQL server of cargo xtask test python
(SNOWMINT_TEST_POSTGRES_URL, a database of the run's own; each test makes and
drops its own database in it).

Each test writes the recipe's files into a temporary project, inserts
100,000 rows from two processes at once with IDs from the column default,
reads them back ORDER BY id and checks that each process's rows come back in
the order it inserted them, with no duplicate ID.
"""

import os
import re
import subprocess
import sys
import textwrap
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

import snowmint

from conftest import ROOT

ROWS = 100_000
PROCESSES = 2
BATCH = 5000
# How long a writer may take (its share takes seconds).
WRITER_TIMEOUT_S = 240
RECIPE = ROOT / "docs" / "recipes" / "python-orms.md"


def recipe_files():
    """{path: source} of the recipe's files (blocks whose first line is `# myapp/NAME.py`)."""
    text = RECIPE.read_text(encoding="utf-8")
    files = dict(re.findall(r"```python\n# (myapp/\w+\.py)\n(.*?)```", text, re.S))
    assert set(files) == {"myapp/ids.py", "myapp/models.py", "myapp/tables.py"}, set(files)
    return files


def write_project(tmp_path, names):
    files = recipe_files()
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "__init__.py").write_text("")
    for name in names:
        (tmp_path / name).write_text(files[name], encoding="utf-8")


@pytest.fixture
def database():
    """The URL of a new database on the test server, dropped afterwards."""
    import psycopg

    base = os.environ.get("SNOWMINT_TEST_POSTGRES_URL")
    if not base:
        pytest.fail("SNOWMINT_TEST_POSTGRES_URL is not set (cargo xtask test python sets it)")
    name = f"snowmint_recipe_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = urlunsplit(urlsplit(base)._replace(path=f"/{name}"))
    try:
        yield url
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def run(args, cwd, env, timeout=300):
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def run_writers(tmp_path, env, script):
    """Runs `script` (which inserts its share of the rows) in PROCESSES processes
    at once: each waits until all have started and made their generator, so the
    inserts overlap."""
    (tmp_path / "writer.py").write_text(textwrap.dedent(script), encoding="utf-8")
    (tmp_path / "ready").mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "writer.py", f"p{i}", str(ROWS // PROCESSES), str(PROCESSES)],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for i in range(PROCESSES)
    ]
    # Every writer is waited for before any is judged, and a writer that
    # fails or hangs is reported with the others' output: one that died
    # before the barrier leaves the rest waiting there until it times out.
    results = []
    for i, p in enumerate(procs):
        try:
            out, err = p.communicate(timeout=WRITER_TIMEOUT_S + 30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            out += f"\n(p{i} killed after {WRITER_TIMEOUT_S + 30} s)"
        results.append((p.returncode, out, err))
    report = "\n".join(f"--- p{i} (exit {rc}):\n{out}\n{err}" for i, (rc, out, err) in enumerate(results))
    assert all(rc == 0 for rc, _, _ in results), f"a writer failed:\n{report}"
    workers = [int(out.split()[-1]) for _, out, _ in results]
    # The file lease gave each process its own worker value.
    assert len(set(workers)) == PROCESSES, workers


# The start of every writer: its name and share, and a barrier so that the
# processes insert at the same time. It prints the worker value its lease got.
WRITER_START = f"""
    import faulthandler, os, sys, time
    # A writer still running after WRITER_TIMEOUT_S prints every thread's stack
    # and exits: the test reports where it hung.
    faulthandler.dump_traceback_later({WRITER_TIMEOUT_S}, exit=True)
    name, count, processes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    from myapp.ids import generator
    worker = generator().nodes["worker"]
    open(os.path.join("ready", name), "w").close()
    deadline = time.monotonic() + 60
    while len(os.listdir("ready")) < processes:
        if time.monotonic() > deadline:
            sys.exit(f"{{name}}: the other writers were not ready within 60 s")
        time.sleep(0.01)
"""


def check_rows(database, table):
    """The table's id column is a bigint, and its rows (id, source, seq) read
    back ORDER BY id are every writer's, each in its insertion order."""
    import psycopg

    with psycopg.connect(database) as conn:
        column = conn.execute(
            "SELECT data_type FROM information_schema.columns"
            " WHERE table_name = %s AND column_name = 'id'",
            (table,),
        ).fetchone()
        assert column == ("bigint",)
        rows = conn.execute(f"SELECT id, source, seq FROM {table} ORDER BY id").fetchall()
    assert len(rows) == ROWS
    ids = [r[0] for r in rows]
    assert len(set(ids)) == ROWS
    assert ids == sorted(ids)
    by_source = {}
    for id_, source, seq in rows:
        by_source.setdefault(source, []).append(seq)
        assert snowmint.decode(id_).datacenter == 7
    assert sorted(by_source) == [f"p{i}" for i in range(PROCESSES)]
    for source, seqs in by_source.items():
        # In ID order, each process's rows are in the order it inserted them.
        assert seqs == list(range(ROWS // PROCESSES)), source
    # The processes' inserts overlapped: their ID ranges interleave.
    firsts = [ids[[r[1] for r in rows].index(f"p{i}")] for i in range(PROCESSES)]
    lasts = [max(r[0] for r in rows if r[1] == f"p{i}") for i in range(PROCESSES)]
    assert max(firsts) < min(lasts)


def project_env(tmp_path, **extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tmp_path)
    env["MYAPP_ID_LEASE"] = f"file:{tmp_path / 'lease'}"
    env["MYAPP_DATACENTER"] = "7"
    env.update(extra)
    return env


def test_django_recipe(tmp_path, database):
    write_project(tmp_path, ["myapp/ids.py", "myapp/models.py"])
    u = urlsplit(database)
    (tmp_path / "settings.py").write_text(
        textwrap.dedent(f"""
            SECRET_KEY = "test"
            USE_TZ = True
            INSTALLED_APPS = ["myapp"]
            DATABASES = {{
                "default": {{
                    "ENGINE": "django.db.backends.postgresql",
                    "NAME": {u.path.lstrip("/")!r},
                    "USER": {u.username!r},
                    "HOST": {u.hostname!r},
                    "PORT": {u.port or 5432!r},
                }}
            }}
            DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
        """),
        encoding="utf-8",
    )
    env = project_env(tmp_path, DJANGO_SETTINGS_MODULE="settings")
    run([sys.executable, "-m", "django", "makemigrations", "myapp"], tmp_path, env)
    migration = (tmp_path / "myapp" / "migrations" / "0001_initial.py").read_text(encoding="utf-8")
    # The migration writer serialised the default as a reference to the function.
    assert "default=myapp.ids.new_id" in migration, migration
    run([sys.executable, "-m", "django", "migrate", "myapp"], tmp_path, env)

    run_writers(tmp_path, env, WRITER_START + f"""
    import django
    django.setup()
    from myapp.models import Event
    for start in range(0, count, {BATCH}):
        Event.objects.bulk_create(
            [Event(source=name, seq=i) for i in range(start, min(start + {BATCH}, count))]
        )
    print(worker)
    """)

    check_rows(database, "myapp_event")


def test_sqlalchemy_recipe(tmp_path, database):
    write_project(tmp_path, ["myapp/ids.py", "myapp/tables.py"])
    url = database.replace("postgres://", "postgresql+psycopg://", 1)
    env = project_env(tmp_path, RECIPE_DATABASE_URL=url)
    run([sys.executable, "-c", textwrap.dedent("""
        import os
        from sqlalchemy import create_engine
        from myapp.tables import Base
        Base.metadata.create_all(create_engine(os.environ["RECIPE_DATABASE_URL"]))
    """)], tmp_path, env)

    run_writers(tmp_path, env, WRITER_START + f"""
    from sqlalchemy import create_engine, insert
    from sqlalchemy.orm import Session
    from myapp.tables import Event
    engine = create_engine(os.environ["RECIPE_DATABASE_URL"])
    # The first batch as objects, the others with ORM bulk INSERT (both call
    # new_id() once per row, in order).
    with Session(engine) as session:
        session.add_all(Event(source=name, seq=i) for i in range(min({BATCH}, count)))
        session.commit()
    for start in range({BATCH}, count, {BATCH}):
        with Session(engine) as session:
            rows = [dict(source=name, seq=i) for i in range(start, min(start + {BATCH}, count))]
            session.execute(insert(Event), rows)
            session.commit()
    print(worker)
    """)

    check_rows(database, "event")
