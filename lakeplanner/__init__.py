"""lakeplanner: auditable question answering over hybrid data lakes."""

from lakeplanner.config import IngestConfig
from lakeplanner.contract.models import Contract, ExclusionManifest
from lakeplanner.errors import LakeplannerError
from lakeplanner.ingest.pipeline import IngestReport
from lakeplanner.lake import Lake, LakeInfo, sample_lake_path

__all__ = [
    "Contract",
    "ExclusionManifest",
    "IngestConfig",
    "IngestReport",
    "Lake",
    "LakeInfo",
    "LakeplannerError",
    "sample_lake_path",
]
__version__ = "0.1.0"
