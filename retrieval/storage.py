"""Index files: one ``.npy`` per array plus ``meta.json``; memory-mapped on load, never pickled.

Layout of an index directory::

    meta.json        {"format_version", "kind", "rankscope_version", "arrays", ...caller's meta}
    <name>.npy       one per numeric array (loaded with mmap_mode="r", allow_pickle=False)
    <name>.utf8.npy  + <name>.offsets.npy for an array of strings (UTF-8 bytes and offsets)

Strings are stored as bytes plus offsets because ``.npy`` can only hold Python
objects through pickle, which would let a crafted index file run code.

:func:`save_index` writes into a temporary sibling directory and renames it into
place, so an interrupted save never leaves a half-written index where a good
one used to be.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.core.errors import FormatError
from rankscope.core.version import __version__

FORMAT_VERSION = 1
"""Version of the on-disk layout; bumped on incompatible changes. Newer versions are refused."""

META_FILE = "meta.json"
_RESERVED = ("format_version", "kind", "rankscope_version", "arrays")


class IndexFormatError(FormatError):
    """An index directory is missing, of another kind, newer than supported, or damaged."""


def save_index(
    directory: str | os.PathLike[str],
    kind: str,
    meta: Mapping[str, Any],
    arrays: Mapping[str, np.ndarray | Sequence[str]],
    files: Mapping[str, bytes] | None = None,
) -> Path:
    """Write an index of ``kind`` atomically; returns the directory.

    ``meta`` must be JSON-serialisable (put the analyzer config and the
    parameters there). String arrays (dtype ``str``/``object`` or lists of str)
    are stored pickle-free. ``files`` are extra files in formats of their own
    (word vectors, a FAISS index), written inside the same swap so that a crash
    never leaves an index whose parts disagree. An existing directory is replaced only if it is empty
    or holds an index (a ``meta.json``), so a mistyped path never wipes user files.
    """
    directory = Path(directory)
    clash = sorted(set(meta) & set(_RESERVED))
    if clash:
        raise ValueError(f"meta keys {clash} are reserved by the index format")
    if directory.exists() and not directory.is_dir():
        raise IndexFormatError(directory, None, "exists and is not a directory")
    if directory.is_dir() and any(directory.iterdir()) and not (directory / META_FILE).is_file():
        raise IndexFormatError(directory, None, f"not empty and not an index (no {META_FILE}); refusing to overwrite")
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".tmp", dir=directory.parent))
    try:
        described = {name: _write_array(tmp, name, value) for name, value in arrays.items()}
        for name, data in (files or {}).items():
            _check_name(name)
            (tmp / name).write_bytes(data)
        header = {
            "format_version": FORMAT_VERSION,
            "kind": kind,
            "rankscope_version": __version__,
            "arrays": described,
            **meta,
        }
        (tmp / META_FILE).write_text(json.dumps(header, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        _swap_into_place(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def load_index(directory: str | os.PathLike[str], kind: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read an index written by :func:`save_index` for ``kind``: (meta, arrays), arrays memory-mapped."""
    directory = Path(directory)
    meta = read_meta(directory)
    if meta["kind"] != kind:
        raise IndexFormatError(directory / META_FILE, None, f"holds a {meta['kind']!r} index, expected {kind!r}")
    arrays = {name: _read_array(directory, name, info) for name, info in meta["arrays"].items()}
    return meta, arrays


def read_meta(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The checked ``meta.json`` of an index directory (to find its kind before loading)."""
    path = Path(directory) / META_FILE
    if not path.is_file():
        raise IndexFormatError(path, None, "no index here (meta.json missing)")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexFormatError(path, getattr(exc, "lineno", None), f"not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or any(key not in meta for key in _RESERVED):
        raise IndexFormatError(path, None, f"not a rankscope index header (needs keys {list(_RESERVED)})")
    version = meta["format_version"]
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise IndexFormatError(
            path,
            None,
            f"index format_version {version!r} was written by rankscope {meta.get('rankscope_version')}; "
            f"this rankscope ({__version__}) reads up to {FORMAT_VERSION}: upgrade rankscope",
        )
    return meta


def _check_name(name: str) -> None:
    if not name or "/" in name or name.startswith(".") or name == META_FILE:
        raise ValueError(f"invalid file name {name!r} in an index")


def _write_array(directory: Path, name: str, value: np.ndarray | Sequence[str]) -> dict[str, Any]:
    _check_name(name)
    array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
    if array.dtype.kind in "OU":
        encoded = [str(s).encode("utf-8") for s in array.ravel()]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        np.save(directory / f"{name}.utf8.npy", np.frombuffer(b"".join(encoded), dtype=np.uint8))
        np.save(directory / f"{name}.offsets.npy", offsets)
        return {"type": "strings", "length": len(encoded)}
    if array.dtype.hasobject or array.dtype.kind not in "biuf":
        raise ValueError(f"array {name!r} has dtype {array.dtype}; only numbers and strings can be stored")
    np.save(directory / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
    return {"type": "numeric", "dtype": array.dtype.str, "shape": list(array.shape)}


def _read_array(directory: Path, name: str, info: Mapping[str, Any]) -> np.ndarray:
    if info.get("type") == "strings":
        data = _load_npy(directory / f"{name}.utf8.npy")
        offsets = _load_npy(directory / f"{name}.offsets.npy")
        if len(offsets) != info["length"] + 1:
            raise IndexFormatError(directory / f"{name}.offsets.npy", None, "length does not match meta.json")
        raw = data.tobytes()
        bounds = offsets.tolist()
        return np.array([raw[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])], dtype=object)
    array = _load_npy(directory / f"{name}.npy")
    if array.dtype.str != info.get("dtype") or list(array.shape) != info.get("shape"):
        raise IndexFormatError(
            directory / f"{name}.npy",
            None,
            f"holds {array.dtype.str} {list(array.shape)}, meta.json says {info.get('dtype')} {info.get('shape')}",
        )
    return array


def _load_npy(path: Path) -> np.ndarray:
    if not path.is_file():
        raise IndexFormatError(path, None, "missing from the index directory")
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        raise IndexFormatError(path, None, f"not a readable .npy array ({exc})") from None


def _swap_into_place(tmp: Path, directory: Path) -> None:
    """Rename ``tmp`` to ``directory``, moving an old index aside first and deleting it after."""
    old = None
    if directory.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".old", dir=directory.parent))
        os.replace(directory, old / "index")
    try:
        os.replace(tmp, directory)
    except BaseException:
        if old is not None:
            os.replace(old / "index", directory)
        raise
    finally:
        if old is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(old)


def require_fields(meta: Mapping[str, Any], directory: str | os.PathLike[str], fields: Sequence[str]) -> None:
    """Raise :class:`IndexFormatError` if ``meta`` lacks any of ``fields`` (for loaders)."""
    missing = [f for f in fields if f not in meta]
    if missing:
        raise IndexFormatError(Path(directory) / META_FILE, None, f"missing field(s) {missing}")
