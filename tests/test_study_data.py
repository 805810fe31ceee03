"""The project's copy of the study data is unchanged.

SHA256SUMS was taken from the shared original."""

import hashlib

from tests.conftest import STUDY


def manifest() -> dict[str, str]:
    lines = (STUDY / "SHA256SUMS").read_text().splitlines()
    return {
        name.removeprefix("./"): digest for digest, name in (line.split(None, 1) for line in lines)
    }


def test_copy_matches_its_checksums():
    files = {p.relative_to(STUDY).as_posix() for p in STUDY.rglob("*") if p.is_file()} - {
        "SHA256SUMS"
    }
    expected = manifest()
    assert files == set(expected)
    for name, digest in expected.items():
        assert hashlib.sha256((STUDY / name).read_bytes()).hexdigest() == digest, name
