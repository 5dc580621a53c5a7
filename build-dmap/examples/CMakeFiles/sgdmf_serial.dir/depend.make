# Empty dependencies file for sgdmf_serial.
# This may be replaced when dependencies are built.
