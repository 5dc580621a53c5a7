# Empty compiler generated dependencies file for strads_unit_tests.
# This may be replaced when dependencies are built.
