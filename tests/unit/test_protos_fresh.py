"""The generated protobuf code in cluster/api is exactly what `make protos` makes from protos/."""

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_matches_protos(tmp_path: Path) -> None:
    # `make protos` with PROTO_OUT pointed elsewhere runs the one generation command into tmp_path.
    make = shutil.which("make")
    assert make is not None, "make is needed to regenerate the protobuf code"
    subprocess.run(
        [make, "-s", "--no-print-directory", "gen-protos", f"PROTO_OUT={tmp_path}", f"PY={sys.executable}"],
        cwd=ROOT, check=True, capture_output=True,
    )
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.py*"))
    committed = sorted(p.relative_to(ROOT) for p in (ROOT / "cluster" / "api").glob("*_pb2*.py*"))
    assert generated == committed, "protos/ and cluster/api disagree on which files exist: run `make protos`"
    stale = [str(p) for p in generated if not filecmp.cmp(tmp_path / p, ROOT / p, shallow=False)]
    assert not stale, f"stale generated code, run `make protos`: {stale}"
