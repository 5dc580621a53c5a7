# Empty compiler generated dependencies file for strads_core.
# This may be replaced when dependencies are built.
