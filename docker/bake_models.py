"""Assemble and verify GGUF models at image build time: `python bake_models.py default small [--drop-parts]`.

lakeplanner.llm.weights.model_path concatenates the weight-part packages into the cache directory
($XDG_CACHE_HOME/lakeplanner/models) and checks the file's sha256; a mismatch fails the build.
--drop-parts then uninstalls the part packages, which the verified files make redundant."""

from __future__ import annotations

import subprocess
import sys

from lakeplanner.llm.weights import MODELS, model_path


def main(argv: list[str]) -> None:
    drop = "--drop-parts" in argv
    names = [a for a in argv if a != "--drop-parts"] or ["default"]
    for name in names:
        path = model_path(name)
        print(f"{name}: {path} ({path.stat().st_size} bytes, sha256 {MODELS[name].sha256})")
    if drop:
        packages = [f"{spec.package_prefix}{i}" for spec in MODELS.values() for i in range(1, spec.parts + 1)]
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", *packages], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
