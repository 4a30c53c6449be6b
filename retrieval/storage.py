"""Index files: one ``.npy`` per array plus ``meta.json``; memory-mapped on load, never pickled.

Layout of an index directory::

    meta.json        {"format_version", "kind", "rankscope_version", "arrays", ...caller's meta}
    <name>.npy       one per numeric array (loaded with mmap_mode="r", allow_pickle=False)
    <name>.utf8.npy  + <name>.offsets.npy for an array of strings (UTF-8 bytes and offsets)

Strings are stored as bytes plus offsets because ``.npy`` can only hold Python
objects through pickle, which would let a crafted index file run code.

Every file's SHA-256 is computed while it is written and recorded in ``meta.json``
(``checksums``); :func:`verify_index` (``load_index(..., verify=True)``, and always
``rankscope search --index-dir``) checks them, so an array altered with a valid shape
is refused. Loading always checks what is cheap: the header's types, array names
confined to the folder, dtypes, shapes, and string offsets that start at 0, never
decrease and end at the data's length.

:func:`save_index` writes into a staging folder beside the index (:func:`replacing_index`)
which takes its place in one atomic exchange (``renameat2(RENAME_EXCHANGE)``; two renames on a
file system without it), so a build killed at any point leaves the previous index (or none),
never a mix. Writers of one index are serialised by a lock file beside it (``.<name>.lock``,
holding the writer's pid; a POSIX lock, so a killed writer's lock is released by the kernel and
never goes stale): a second writer is refused with one line. The staging folders killed writers
left behind are deleted by the next writer (the locks and the exchange: :mod:`.index_swap`). Readers
(:func:`~rankscope.retrieval.index_swap.reading_index`, which :func:`load_index` takes) hold a shared lock on the index folder while they open it, and the
exchange waits for them: a reader sees the old index or the new one, never half of each.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from rankscope.core import jsonstrict as strict_json
from rankscope.core.errors import FormatError
from rankscope.core.fileio import naming_errors
from rankscope.core.jsonstrict import JSONValueError
from rankscope.core.version import __version__
from rankscope.retrieval.index_swap import fault, inside_staging, reading_index, staged

FORMAT_VERSION = 2
"""Version of the on-disk layout; bumped on incompatible changes. Newer versions are refused, older ones read.
2: term counts (``tf``) stored as uint16/uint32 instead of float64."""

META_FILE = "meta.json"
_RESERVED = ("format_version", "kind", "rankscope_version", "arrays")
_OPTIONAL = ("checksums",)  # absent from indexes saved before checksums were recorded


class IndexFormatError(FormatError):
    """An index directory is missing, of another kind, newer than supported, or damaged."""


T = TypeVar("T")


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
    with writing_index(directory, kind, meta) as writer:
        for name, value in arrays.items():
            writer.add(name, value)
        for name, data in (files or {}).items():
            writer.add_file(name, data)
    return Path(directory)


class IndexWriter:
    """An index being written in a staging folder beside its destination (see :func:`writing_index`)."""

    def __init__(self, staging: Path) -> None:
        self.staging = staging
        self._described: dict[str, dict[str, Any]] = {}
        self._checksums: dict[str, str] = {}
        self._mapped: list[str] = []  # files written through new_array: hashed when the index is committed

    def add(self, name: str, value: np.ndarray | Sequence[str]) -> None:
        """Write one array (numbers, or strings stored as UTF-8 bytes plus offsets)."""
        self._described[name] = _write_array(self.staging, name, value, self._checksums)

    def add_file(self, name: str, data: bytes) -> None:
        """Write a file in a format of its own (a FAISS index, word vectors)."""
        _check_name(name)
        (self.staging / name).write_bytes(data)
        self._checksums[name] = hashlib.sha256(data).hexdigest()

    def new_array(self, name: str, length: int, dtype: Any) -> np.ndarray:
        """A numeric array of the index, memory-mapped for writing: it is filled in place (never held
        in memory whole) and must be complete, and no longer written, when the index is committed."""
        _check_name(name)
        array = np.lib.format.open_memmap(self.staging / f"{name}.npy", mode="w+", dtype=dtype, shape=(length,))
        self._described[name] = {"type": "numeric", "dtype": array.dtype.str, "shape": [length]}
        self._mapped.append(f"{name}.npy")
        return array

    def _commit(self, kind: str, meta: Mapping[str, Any]) -> None:
        for file_name in self._mapped:  # read back from the page cache: costs no memory of the process
            self._checksums[file_name] = _file_sha256(self.staging / file_name)
        header = {
            "format_version": FORMAT_VERSION,
            "kind": kind,
            "rankscope_version": __version__,
            "arrays": self._described,
            "checksums": self._checksums,
            **meta,
        }
        text = json.dumps(header, indent=1, sort_keys=True) + "\n"
        (self.staging / META_FILE).write_text(text, encoding="utf-8")


@contextlib.contextmanager
def writing_index(directory: str | os.PathLike[str], kind: str, meta: Mapping[str, Any]) -> Iterator[IndexWriter]:
    """Write an index of ``kind`` through the :class:`IndexWriter` given: its files go to the staging
    folder of :func:`replacing_index` (the same file system, so large arrays can be built there in
    place), which replaces ``directory`` when the block ends, or is deleted if it raises. Files the
    block puts in sub-folders of :attr:`IndexWriter.staging` (scratch space) must be gone by then."""
    clash = sorted(set(meta) & {*_RESERVED, *_OPTIONAL})
    if clash:
        raise ValueError(f"meta keys {clash} are reserved by the index format")
    with replacing_index(directory) as staging:
        writer = IndexWriter(staging)
        yield writer
        writer._commit(kind, meta)
        fault("committing")


@contextlib.contextmanager
def replacing_index(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """An empty staging folder beside ``directory`` that replaces it in one atomic exchange when the
    block ends (deleted if the block raises), under the writer's lock of ``directory``
    (:func:`~rankscope.retrieval.index_swap.staged`).

    A second process writing the same ``directory`` meanwhile is refused
    (:class:`~rankscope.retrieval.index_swap.IndexBusyError`).
    The staging folders of killed writers are deleted first. Inside another staging folder of this
    process, ``directory`` itself is yielded (created empty): the outer folder's swap covers it.
    An existing ``directory`` is replaced only if it is empty or holds an index (a ``meta.json``),
    so a mistyped path never wipes user files."""
    given, directory = Path(directory), Path(os.path.abspath(directory))
    if directory.exists() and not directory.is_dir():
        raise IndexFormatError(given, None, "exists and is not a directory")
    if inside_staging(directory):
        directory.mkdir(parents=True, exist_ok=True)
        if any(directory.iterdir()):
            raise ValueError(f"{directory}: a folder inside an index being written must start empty")
        yield directory
        return
    if directory.is_dir() and any(directory.iterdir()) and not (directory / META_FILE).is_file():
        raise IndexFormatError(given, None, f"not empty and not an index (no {META_FILE}); refusing to overwrite")
    with naming_errors(given):  # a full disk names the index folder, not its staging sibling
        directory.parent.mkdir(parents=True, exist_ok=True)
        with staged(directory, given) as staging:
            yield staging


def load_index(
    directory: str | os.PathLike[str], kind: str, *, verify: bool = False
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read an index written by :func:`save_index` for ``kind``: (meta, arrays), arrays memory-mapped.

    ``verify=True`` also checks every file against the checksums recorded at save (reads them all).
    """
    directory = Path(directory)
    with reading_index(directory):
        meta = read_meta(directory)
        if meta["kind"] != kind:
            raise IndexFormatError(directory / META_FILE, None, f"holds a {meta['kind']!r} index, expected {kind!r}")
        if verify:
            verify_index(directory)
        arrays = {name: _read_array(directory, name, info) for name, info in meta["arrays"].items()}
    return meta, arrays


def verify_index(directory: str | os.PathLike[str]) -> None:
    """Check every file of the index (and of sub-indexes in its folders) against its recorded SHA-256."""
    directory = Path(directory)
    meta = read_meta(directory)
    checksums = meta.get("checksums")
    if checksums is None:
        raise IndexFormatError(
            directory / META_FILE, None, "records no checksums (saved by an older rankscope); save the index again"
        )
    for name, expected in checksums.items():
        path = directory / name
        if _file_sha256(path) != expected:
            raise IndexFormatError(path, None, "checksum differs from meta.json: the file was altered or damaged")
    for sub in sorted(p.parent for p in directory.glob(f"*/{META_FILE}")):
        verify_index(sub)


def _require_index_file(path: Path) -> None:
    """An index file must be a regular file: a directory or a FIFO in its place is said as such, not 'missing'."""
    if path.is_file():
        return
    if not path.exists():
        raise IndexFormatError(path, None, "missing from the index directory")
    kind = "a directory" if path.is_dir() else "not a regular file (a FIFO, device or socket)"
    raise IndexFormatError(path, None, f"is {kind} where the index keeps a file; rebuild the index")


def _file_sha256(path: Path) -> str:
    _require_index_file(path)
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_meta(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The checked ``meta.json`` of an index directory (to find its kind before loading)."""
    path = Path(directory) / META_FILE
    if not path.is_file():
        raise IndexFormatError(path, None, "no index here (meta.json missing)")
    try:
        meta = strict_json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, JSONValueError) as exc:
        raise IndexFormatError(path, getattr(exc, "lineno", None), f"not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or any(key not in meta for key in _RESERVED):
        raise IndexFormatError(path, None, f"not a rankscope index header (needs keys {list(_RESERVED)})")
    _check_header(path, meta)
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
    if not plain_name(name):
        raise ValueError(f"invalid file name {name!r} in an index")


def plain_name(name: object) -> bool:  # also checks a hybrid index's part folders
    """A plain file name inside the index folder: no path separator, no leading dot, not meta.json."""
    return (
        isinstance(name, str)
        and bool(name)
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
        and not name.startswith(".")
        and name != META_FILE
    )


def _check_header(path: Path, meta: dict[str, Any]) -> None:
    """The header's own entries have the types the loader relies on; array names stay inside the folder."""
    problems = []
    if not isinstance(meta["kind"], str):
        problems.append(f"'kind' must be a string, found {json.dumps(meta['kind'])[:40]}")
    arrays = meta["arrays"]
    if not isinstance(arrays, dict):
        problems.append("'arrays' must be an object")
    else:
        for name, info in arrays.items():
            if not plain_name(name):
                problems.append(f"array name {name!r} is not a plain file name inside the index folder")
            elif not isinstance(info, dict) or info.get("type") not in ("strings", "numeric"):
                problems.append(f"array {name!r} must be described by an object with type 'strings' or 'numeric'")
            elif info["type"] == "strings" and not _is_count(info.get("length")):
                problems.append(f"array {name!r}: 'length' must be a non-negative integer")
            elif info["type"] == "numeric" and not (
                isinstance(info.get("dtype"), str)
                and isinstance(info.get("shape"), list)
                and all(_is_count(n) for n in info["shape"])
            ):
                problems.append(
                    f"array {name!r}: needs 'dtype' (a string) and 'shape' (a list of non-negative integers)"
                )
    checksums = meta.get("checksums", {})
    if not isinstance(checksums, dict) or not all(plain_name(k) and isinstance(v, str) for k, v in checksums.items()):
        problems.append("'checksums' must map plain file names to SHA-256 strings")
    if problems:
        raise IndexFormatError(path, None, problems[0])


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _write_array(
    directory: Path, name: str, value: np.ndarray | Sequence[str], checksums: dict[str, str]
) -> dict[str, Any]:
    """Write one array (two files for strings), adding each file's SHA-256 to ``checksums``."""
    _check_name(name)
    array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
    if array.dtype.kind in "OU":
        encoded = [str(s).encode("utf-8") for s in array.ravel()]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        _save_hashed(directory / f"{name}.utf8.npy", np.frombuffer(b"".join(encoded), dtype=np.uint8), checksums)
        _save_hashed(directory / f"{name}.offsets.npy", offsets, checksums)
        return {"type": "strings", "length": len(encoded)}
    if array.dtype.hasobject or array.dtype.kind not in "biuf":
        raise ValueError(f"array {name!r} has dtype {array.dtype}; only numbers and strings can be stored")
    _save_hashed(directory / f"{name}.npy", np.ascontiguousarray(array), checksums)
    return {"type": "numeric", "dtype": array.dtype.str, "shape": list(array.shape)}


class _HashingWriter:
    """A binary file that hashes what is written to it, so a checksum costs no second read."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self.digest = hashlib.sha256()

    def write(self, data: Any) -> int:
        self.digest.update(data)
        return self._handle.write(data)


def _save_hashed(path: Path, array: np.ndarray, checksums: dict[str, str]) -> None:
    with path.open("wb") as handle:
        writer = _HashingWriter(handle)
        np.save(writer, array, allow_pickle=False)
    checksums[path.name] = writer.digest.hexdigest()


def _read_array(directory: Path, name: str, info: Mapping[str, Any]) -> np.ndarray:
    if info.get("type") == "strings":
        data = _load_npy(directory / f"{name}.utf8.npy")
        offsets = _load_npy(directory / f"{name}.offsets.npy")
        where = directory / f"{name}.offsets.npy"
        if data.dtype != np.uint8 or data.ndim != 1 or offsets.dtype != np.int64 or offsets.ndim != 1:
            raise IndexFormatError(where, None, "string arrays must be uint8 data with int64 offsets")
        if len(offsets) != info["length"] + 1:
            raise IndexFormatError(where, None, "length does not match meta.json")
        if offsets[0] != 0 or offsets[-1] != len(data) or (np.diff(offsets) < 0).any():
            raise IndexFormatError(where, None, "offsets must start at 0, never decrease and end at the data's length")
        raw = data.tobytes()
        bounds = offsets.tolist()
        try:
            return np.array([raw[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])], dtype=object)
        except UnicodeDecodeError as exc:
            raise IndexFormatError(directory / f"{name}.utf8.npy", None, f"not UTF-8 ({exc.reason})") from None
    array = _load_npy(directory / f"{name}.npy")
    if array.dtype.str != info.get("dtype") or list(array.shape) != info.get("shape"):
        raise IndexFormatError(
            directory / f"{name}.npy",
            None,
            f"holds {array.dtype.str} {list(array.shape)}, meta.json says {info.get('dtype')} {info.get('shape')}",
        )
    return array


def _load_npy(path: Path) -> np.ndarray:
    _require_index_file(path)
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise IndexFormatError(path, None, f"not a readable .npy array ({exc})") from None


def require_fields(meta: Mapping[str, Any], directory: str | os.PathLike[str], fields: Mapping[str, type]) -> None:
    """Raise :class:`IndexFormatError` if ``meta`` lacks any of ``fields`` or holds one of another type."""
    missing = [f for f in fields if f not in meta]
    if missing:
        raise IndexFormatError(Path(directory) / META_FILE, None, f"missing field(s) {missing}")
    for name, kind in fields.items():
        if not isinstance(meta[name], kind) or isinstance(meta[name], bool):
            found = json.dumps(meta[name])[:40]
            raise IndexFormatError(
                Path(directory) / META_FILE, None, f"{name!r} must be a JSON {_JSON_NAMES[kind]}, found {found}"
            )


_JSON_NAMES = {dict: "object", list: "array", int: "integer", str: "string"}


def from_saved_params(cls: type[T], params: Mapping[str, Any], directory: str | os.PathLike[str]) -> T:
    """``cls(**params)`` for a saved index: a value its constructor refuses is an :class:`IndexFormatError`
    naming the index's meta.json (the file the user would edit), not a traceback."""
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        raise IndexFormatError(Path(directory) / META_FILE, None, f"params: {exc}") from None
