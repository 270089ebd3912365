"""The listing of the raw root: its order, and names kept exact whatever their bytes."""

from __future__ import annotations

import os
import pickle

from ingest.discovery import discover


def make(path: bytes, data: bytes = b"x") -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def test_entries_come_depth_first_in_name_order_with_their_exact_names(tmp_path):
    root = os.fsencode(tmp_path)
    make(root + b"/b.csv", b"12345")
    make(root + b"/a/z.csv")
    make(root + b"/caf\xc3\xa9.csv")  # UTF-8, not ASCII
    make(root + b"/bad\xff.csv")  # not UTF-8 at all
    make(root + b"/d\xffir/x.csv")
    found = discover(tmp_path)
    assert [f.relpath for f in found] == [
        "b.csv", "bad\\xff.csv", "café.csv", "a/z.csv", "d\\xffir/x.csv"]
    assert [os.fsencode(f.path) for f in found] == [
        root + b"/b.csv", root + b"/bad\xff.csv", root + b"/caf\xc3\xa9.csv",
        root + b"/a/z.csv", root + b"/d\xffir/x.csv"]
    assert all(type(f.path) is type(tmp_path) and f.readable for f in found)
    assert found[0].size_bytes == 5
    assert found[0].mtime_ns == os.stat(root + b"/b.csv").st_mtime_ns
    assert found[1].path.read_bytes() == b"x"


def test_a_found_file_pickles_the_same_before_and_after_its_path_is_made(tmp_path):
    (tmp_path / "r.csv").write_text("1")
    [fresh] = discover(tmp_path)
    [used] = discover(tmp_path)
    assert used.path == tmp_path / "r.csv"  # made, and kept with the entry
    for found in (fresh, used):
        copy = pickle.loads(pickle.dumps(found))  # as sent to the worker processes
        assert copy == found and hash(copy) == hash(found)
        assert copy.path == tmp_path / "r.csv" and copy.relpath == "r.csv"
    assert {fresh, used} == {fresh}


def test_hidden_entries_with_undecodable_names_are_said_in_text_a_ledger_can_hold(tmp_path):
    """Their reason named the entry with its raw name: a lone surrogate, which the ledger
    (UTF-8) refused, failing the whole raw step."""
    root = os.fsencode(tmp_path)
    make(root + b"/.\xffhid")
    make(root + b"/.\xfedir/f.csv")
    found = discover(tmp_path)
    assert [(f.relpath, f.unread_status, f.unread_reason) for f in found] == [
        (".\\xffhid", "ignored",
         "a hidden file (name starts with '.'): not read; rename it to ingest it"),
        (".\\xfedir/f.csv", "ignored", "inside hidden folder .\\xfedir/ (name starts with "
                                       "'.'): not read; rename it to ingest it")]
    for f in found:
        f.unread_reason.encode("utf-8")  # raises on a surrogate
