# Empty dependencies file for sgdmf_omp.
# This may be replaced when dependencies are built.
