"""Nothing outside the raw root is ever read: a folder, or the file itself, swapped for a
symbolic link between the listing and the reading is refused with its reason, and none of
the bytes behind the link reach any table (ingest/reading.py `RawTree`)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ingest import engine
from ingest.discovery import discover
from ingest.engine import ingest
from ingest.reading import NOT_FOLLOWED, RawTree, Unreadable, Vanished
from ingest.run_context import resolver_for
from store.store import Store

FOLDER = "inference/h100-bm-01/perf_analyzer"
PA = f"{FOLDER}/bert_large_onnx-results.csv"
RUN_YAML = f"{FOLDER}/run.yaml"
SECRET = "SECRET-OUTSIDE"
OUTSIDE = {  # what lies outside the root, under the names the listing saw inside it
    "bert_large_onnx-results.csv": f"{SECRET} first line,1,2\n3,4,5\n".encode(),
    "run.yaml": f"system: {SECRET}-system\n".encode(),
}
FOLDER_LINK = (f"a folder on its path ({FOLDER}) became a symbolic link after the listing: "
               f"{NOT_FOLLOWED}")
FILE_LINK = f"became a symbolic link after the listing: {NOT_FOLLOWED}"


def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    for name, data in OUTSIDE.items():
        (folder / name).write_bytes(data)
    return folder


def swap_after_listing(monkeypatch, swap) -> None:
    """The engine lists the root, then `swap` runs, then the engine reads."""
    real = engine.discover

    def discover_then_swap(root, *partitions):
        found = real(root, *partitions)
        swap()
        return found

    monkeypatch.setattr(engine, "discover", discover_then_swap)


def ledger(store: Store) -> dict[str, tuple]:
    return {r[0]: r[1:] for r in store.con.execute(
        "SELECT path, status, error FROM raw.ingested_files").fetchall()}


def text_holding(store: Store, needles: list[str]) -> list[tuple[str, str]]:
    """(table, column) of every text cell of every table holding one of the needles."""
    columns = store.con.execute(
        "SELECT table_schema, table_name, column_name FROM information_schema.columns "
        "WHERE data_type = 'VARCHAR' AND table_catalog = current_database()").fetchall()
    found = []
    for schema, table, column in columns:
        where = " OR ".join(f'"{column}" LIKE ?' for _ in needles)
        count = store.con.execute(f'SELECT count(*) FROM "{schema}"."{table}" WHERE {where}',
                                  [f"%{n}%" for n in needles]).fetchone()
        if count and count[0]:
            found.append((f"{schema}.{table}", column))
    return found


def nothing_from_outside(store: Store) -> None:
    hashes = [hashlib.sha256(data).hexdigest() for data in OUTSIDE.values()]
    assert text_holding(store, [SECRET, *hashes]) == []


def test_a_folder_swapped_for_a_symlink_after_listing_is_not_followed(store, raw, tmp_path,
                                                                       monkeypatch):
    target = outside(tmp_path)

    def swap():
        (raw / FOLDER).rename(tmp_path / "moved-away")
        (raw / FOLDER).symlink_to(target, target_is_directory=True)

    swap_after_listing(monkeypatch, swap)
    report = ingest(store, raw, "r1")
    rows = ledger(store)
    assert rows[PA] == ("rejected", FOLDER_LINK)
    assert rows[RUN_YAML] == ("rejected", FOLDER_LINK)  # context files too
    assert report.counts()["rejected"] == 2
    nothing_from_outside(store)
    # the next run lists the link and records it as discovery does
    monkeypatch.undo()
    ingest(store, raw, "r2")
    assert ledger(store)[FOLDER] == ("ignored", "symlink to a folder outside the raw root: "
                                                "not followed")
    nothing_from_outside(store)


def test_a_file_swapped_for_a_symlink_after_listing_is_not_followed(store, raw, tmp_path,
                                                                     monkeypatch):
    target = outside(tmp_path)

    def swap():
        for name in OUTSIDE:
            (raw / FOLDER / name).unlink()
            (raw / FOLDER / name).symlink_to(target / name)

    swap_after_listing(monkeypatch, swap)
    ingest(store, raw, "r1")
    rows = ledger(store)
    assert rows[PA] == ("rejected", FILE_LINK)
    assert rows[RUN_YAML] == ("rejected", FILE_LINK)
    nothing_from_outside(store)


def test_examined_in_worker_processes_too(store, raw, tmp_path, monkeypatch):
    """Above 500 files to examine the engine starts workers: they read the same way."""
    for i in range(520):
        (raw / "extra" / f"{i // 100}").mkdir(parents=True, exist_ok=True)
        (raw / "extra" / f"{i // 100}" / f"f{i}.txt").write_text(f"not a result {i}\n")
    target = outside(tmp_path)

    def swap():
        (raw / FOLDER).rename(tmp_path / "moved-away")
        (raw / FOLDER).symlink_to(target, target_is_directory=True)

    swap_after_listing(monkeypatch, swap)
    ingest(store, raw, "r1", engine.Limits(workers=2))
    assert ledger(store)[PA] == ("rejected", FOLDER_LINK)
    nothing_from_outside(store)


# the tree itself

def make(root: Path, relpath: str, data: bytes = b"x") -> None:
    (root / relpath).parent.mkdir(parents=True, exist_ok=True)
    (root / relpath).write_bytes(data)


def test_the_tree_reads_inside_and_refuses_every_link(tmp_path):
    root, away = tmp_path / "root", tmp_path / "away"
    make(root, "a/b/c.csv", b"inside")
    make(away, "c.csv", b"outside")
    [listed] = discover(root)
    with RawTree(root) as tree:
        assert tree.read(listed, 100) == b"inside"
        (root / "a/b").rename(tmp_path / "b-moved")
        (root / "a/b").symlink_to(away, target_is_directory=True)
        with pytest.raises(Unreadable) as caught:
            RawTree(root).read(listed, 100)  # a fresh tree: no folder open yet
        assert str(caught.value) == ("a folder on its path (a/b) became a symbolic link after "
                                     f"the listing: {NOT_FOLLOWED}")
        (root / "a/b").unlink()
        make(root, "a/b/c.csv", b"inside again")
        (root / "a/b/c.csv").unlink()
        (root / "a/b/c.csv").symlink_to(away / "c.csv")
        with pytest.raises(Unreadable, match=f"^{FILE_LINK}$"):
            RawTree(root).read(listed, 100)
        (root / "a/b/c.csv").unlink()
        with pytest.raises(Vanished, match="^vanished between discovery and reading"):
            RawTree(root).read(listed, 100)
        (root / "a/b").rmdir()
        (root / "a/b").write_bytes(b"a file now")
        with pytest.raises(Unreadable, match=r"^a folder on its path \(a/b\) is no longer a "
                                             "folder: not read$"):
            RawTree(root).read(listed, 100)
        os.mkfifo(root / "a/fifo")
        with pytest.raises(Unreadable, match="no longer a regular file"):  # never blocks
            tree.read_relative("a/fifo", 100)


def test_a_symlink_inside_the_root_is_read_where_it_led_when_listed(tmp_path):
    make(tmp_path, "data/real.csv", b"real")
    (tmp_path / "link.csv").symlink_to("data/real.csv")
    found = {f.relpath: f for f in discover(tmp_path)}
    assert found["link.csv"].readable
    assert found["link.csv"].fspath == str(tmp_path.resolve() / "data/real.csv")
    with RawTree(tmp_path.resolve()) as tree:
        assert tree.read(found["link.csv"], 100) == b"real"


def test_folder_descriptors_stay_few_however_many_folders(tmp_path):
    for i in range(40):
        make(tmp_path, f"d{i:02}/e/f.csv", str(i).encode())
    open_before = len(os.listdir("/proc/self/fd"))
    with RawTree(tmp_path, max_open=4) as tree:
        assert [tree.read(f, 10) for f in discover(tmp_path)] == \
            [str(i).encode() for i in range(40)]
        assert len(os.listdir("/proc/self/fd")) - open_before <= 4 + 1  # and the root
    assert len(os.listdir("/proc/self/fd")) == open_before


def test_a_root_that_cannot_be_opened_says_so_on_every_read(tmp_path):
    make(tmp_path, "root/a.csv")
    [listed] = discover(tmp_path / "root")
    (tmp_path / "root/a.csv").unlink()
    (tmp_path / "root").rmdir()
    with RawTree(tmp_path / "root") as tree, pytest.raises(
            Unreadable, match=r"^the raw root could not be opened \(No such file"):
        tree.read(listed, 10)


def test_sizing_check_context_follows_no_link_out_of_the_root(tmp_path):
    """`sizing check --raw`: the run.yaml above a file is read as ingestion reads it."""
    raw = tmp_path / "raw"
    make(raw, "run.yaml", b"nodes: 2\n")
    make(raw, "a/result.csv")
    (raw / "a/run.yaml").symlink_to(outside(tmp_path) / "run.yaml")
    context = resolver_for(raw, "a/result.csv", 1 << 20).resolve("a/result.csv")
    assert context.values == {"nodes": 2}
    assert context.files == ("run.yaml",)
