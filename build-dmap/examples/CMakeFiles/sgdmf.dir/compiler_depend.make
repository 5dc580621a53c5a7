# Empty compiler generated dependencies file for sgdmf.
# This may be replaced when dependencies are built.
