from __future__ import annotations

import pytest

from medground.corpus.base import BadInputError
from medground.corpus.filecheck import check_file, verify_tree

LFS = b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n"


@pytest.mark.parametrize(
    ("name", "content", "where", "found"),
    [
        ("a.json", LFS, "line 1", "a Git LFS pointer (run `git lfs pull` in the data checkout)"),
        ("b.xml", b"", "file", "an empty file"),
        ("c.txt", b"fine\nbad \xff byte\n", "line 2 (byte 9)", "byte 0xff"),
        ("d.xml", b"<doc><para>cut off", "end of file", "truncated content"),
        ("e.json", b'[{"a": 1}, {"b":', "end of file", "truncated JSON"),
        ("f.jsonl", b'{"a": 1}\n{"b": ', "last line", "truncated line"),
        # Not the format at all is said as such, not as "truncated".
        ("g.xml", b"just some plain text\nnothing else\n", "line 1", "text starting 'just some plain text'"),
        ("h.json", b"garbage;;; 123", "line 1", "text starting 'garbage;;; 123'"),
    ],
)
def test_bad_files(tmp_path, name, content, where, found):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(BadInputError) as exc:
        check_file(path)
    assert (exc.value.path, exc.value.where, exc.value.found) == (str(path), where, found)
    assert str(path) in str(exc.value)


def test_good_files_pass(tmp_path):
    for name, content in [("a.json", b'{"x": "\xc3\xa9"}\n'), ("b.xml", b"<a/>\n"),
                          ("c.bin", b"\xff\xfe"), ("d.jsonl", b'{"a": 1}\n')]:
        (tmp_path / name).write_bytes(content)
        check_file(tmp_path / name)


def test_missing_file(tmp_path):
    with pytest.raises(BadInputError, match="a readable file"):
        check_file(tmp_path / "nope.json")


def test_verify_tree_lists_every_problem(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "ok.json").write_text("[]")
    (tmp_path / "sub" / "lfs.json").write_bytes(LFS)
    (tmp_path / "sub" / "empty.csv").write_bytes(b"")
    (tmp_path / ".hidden").write_bytes(b"")
    problems = verify_tree(tmp_path)
    assert [p.path for p in problems] == [str(tmp_path / "sub" / "empty.csv"),
                                          str(tmp_path / "sub" / "lfs.json")]
    assert "empty file" in problems[0].problem and "LFS" in problems[1].problem


def test_shared_data_tree_is_clean(shared_data):
    assert verify_tree(shared_data / "corpora" / "openstax" / "psychology-2e") == []
