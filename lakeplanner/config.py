"""Settings for ingestion: thresholds from seed 002 and limits that protect the lake."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ChunkingConfig(_Frozen):
    """Structure-aware chunking; sizes are seed 002's defaults (App. B.7.4)."""

    threshold_chars: int = Field(10_000, description="documents shorter than this stay one chunk per section")
    max_chars: int = Field(8_000, description="largest chunk")
    overlap_chars: int = Field(500, description="overlap between sliding-window chunks of one long section")


class DiscoveryConfig(_Frozen):
    """Source discovery (seed 002 App. A.3)."""

    corpus_min_files: int = Field(50, description="a folder with at least this many files may be one corpus source")
    corpus_similarity: float = Field(0.8, description="mean pairwise structural similarity for a corpus")
    corpus_sample: int = Field(5, description="files sampled to measure similarity")


class StructureConfig(_Frozen):
    """Key and link detection thresholds (seed 002 App. A.7)."""

    identity_unique: float = 0.95
    identity_unique_idlike: float = 0.80
    identity_min_values: int = 5
    identity_max_avg_len: int = 500
    composite_unique: float = 0.95
    fk_max_distinct: int = Field(100_000, description="distinct values compared per column for overlap")
    fk_min_overlap: float = Field(0.05, description="overlap below this is not emitted unless names match exactly")
    fk_value_containment: float = Field(
        0.9, description="share of a column's values a key must hold when no name relates the two"
    )
    citation_min_chars: int = Field(4, description="shortest key value that counts as cited when a document names it")
    link_min_match: float = Field(0.5, description="share of a column's values that must name documents")
    text_field_min_avg_chars: int = Field(200, description="a string field this long on average is free text")


class LimitsConfig(_Frozen):
    """Input limits; a file over a limit is reported bad, never half ingested."""

    max_cell_bytes: int = Field(1_000_000, description="largest single CSV/JSON cell")
    max_file_bytes: int = Field(2_000_000_000, description="largest source file")


class IngestConfig(_Frozen):
    chunking: ChunkingConfig = ChunkingConfig()
    discovery: DiscoveryConfig = DiscoveryConfig()
    structure: StructureConfig = StructureConfig()
    limits: LimitsConfig = LimitsConfig()
    embed_batch_size: int = Field(32, description="texts per ONNX embedding batch")
