"""`python -m drills.check [FILE...]`: run every content rule on drill files and list all they break.

With no files it checks every YAML file in the content folder (the template too); `--write-schema` refreshes drills/schema.json.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from drills.draws import CHECK_DRAWS
from drills.loader import CONTENT_DIR, check_file, content_dir
from drills.schema import Drill

SCHEMA_FILE = CONTENT_DIR.parent / "schema.json"


def schema_text() -> str:
    """drills/schema.json exactly as committed: the models' JSON Schema, two-space indents, one final newline."""
    return json.dumps(Drill.model_json_schema(), indent=2) + "\n"


def default_files() -> list[Path]:
    """Every YAML file in the content folder the app reads (FAULTLINES_CONTENT, else drills/content), '_' ones too."""
    return sorted(content_dir().glob("*.yaml"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m drills.check",
        description="Check drill files against every content rule the app applies when it loads them: the schema, "
                    "simulation presets and the numbers their runs use, skills, {placeholders}, pacing, typed "
                    "figures, option lengths, the conditions sentences rely on (holds:, vary.when:) in every "
                    "draw, and truths that must move between retakes. Each problem is printed as file:line: key.path: message. Exit "
                    "status 1 when any file has a problem.")
    parser.add_argument("files", nargs="*", type=Path,
                        help="drill YAML files (default: every *.yaml in the content folder, FAULTLINES_CONTENT "
                             "or drills/content, _template.yaml included)")
    parser.add_argument("--draws", type=int, default=CHECK_DRAWS,
                        help=f"seeded draws of each drill's numbers to check, besides each range's corners "
                             f"(default {CHECK_DRAWS}; the app checks fewer when it loads)")
    parser.add_argument("--write-schema", action="store_true",
                        help="rewrite drills/schema.json from the models in drills/schema.py first "
                             "(after changing them), then check")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.write_schema:
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
    files = list(args.files) or default_files()
    broken = problems = 0
    for path in files:
        _, errors = check_file(path, args.draws)
        for error in errors:
            print(error.describe(str(path)))
        broken += bool(errors)
        problems += len(errors)
    noun = "file" if len(files) == 1 else "files"
    if problems:
        print(f"{problems} problem{'s' if problems != 1 else ''} in {broken} of {len(files)} {noun}", file=sys.stderr)
        return 1
    print(f"{len(files)} drill {noun} checked, no problems")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
