"""tpgemm generator: schedules.yaml -> generated/ (C/CUDA sources and generated/build.ninja).

A pure pipeline: config.load -> config.validate -> plan.build -> render.render -> write.write_tree.
Only __main__ (the CLI) and write.py touch the filesystem. Nothing runs at import.
"""

# Bump when generated output changes for the same input: it is part of every kernel hash and of the
# config hash, so a new version renames instances instead of silently reusing stale objects.
GENERATOR_VERSION = "0.1.0"
