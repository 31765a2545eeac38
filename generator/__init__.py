"""tpgemm generator: schedules.yaml -> generated/ (C/CUDA sources and generated/build.ninja).

The pipeline: models.load (reads schedules.yaml and its includes: config.compose, config.check, models.check) ->
plan.build (pure) -> render.render (reads the templates; writes nothing) -> write.write_tree (or write.diff for
--check). Among the generate path's modules only write.py writes; the tuner (tune_cli.py, tune_report.py) and
vendor.py write their own outputs. Nothing runs at import.
"""

# Bump when generated output changes for the same input: it is part of every kernel hash and of the
# config hash, so a new version renames instances instead of silently reusing stale objects.
GENERATOR_VERSION = "0.1.0"


def path_option(text: str) -> str:
    """argparse's type of the path options: an empty value would read or write the working directory itself ('' is
    '.' to Path), where the user most likely lost a variable's expansion."""
    if not text.strip():
        import argparse  # the stdlib's, here only: nothing runs at import
        raise argparse.ArgumentTypeError("expects a path, got an empty string")
    return text
