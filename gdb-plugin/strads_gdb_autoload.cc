// Makes gdb load strads' printers and commands when it opens a program linked with
// strads::strads, with no -x: an inline Python script in the program's .debug_gdb_scripts
// section (gdb manual, "The .debug_gdb_scripts section"). strads::strads compiles this file
// into every program that links it, with STRADS_GDB_PLUGIN_DIR naming the plugin's folder: the
// source tree's gdb-plugin/ in the build tree, <prefix>/share/strads/gdb-plugin once installed.
//
// The section is mergeable strings ("MS"), so that the entry appears once however many objects
// carry it. gdb runs it only for files under its auto-load safe-path (README, "Debugging a
// replay": add-auto-load-safe-path).
#ifndef STRADS_GDB_PLUGIN_DIR
#error "STRADS_GDB_PLUGIN_DIR must name the folder of the strads_gdb package"
#endif

// 4: SECTION_SCRIPT_ID_PYTHON_TEXT; the first line names the script, the rest is its text.
asm(".pushsection \".debug_gdb_scripts\", \"MS\",%progbits,1\n"
    ".byte 4\n"
    ".ascii \"strads-gdb-plugin\\n\"\n"
    ".ascii \"import sys\\n\"\n"
    ".ascii \"plugin_dir = '" STRADS_GDB_PLUGIN_DIR
    "'\\n\"\n"
    ".ascii \"if plugin_dir not in sys.path:\\n\"\n"
    ".ascii \"    sys.path.insert(0, plugin_dir)\\n\"\n"
    ".ascii \"try:\\n\"\n"
    ".ascii \"    import strads_gdb\\n\"\n"
    ".ascii \"    strads_gdb.register(gdb.current_objfile())\\n\"\n"
    ".ascii \"except ImportError as error:\\n\"\n"
    ".ascii \"    print('strads: no gdb plugin in %s (%s)' % (plugin_dir, error))\\n\"\n"
    ".byte 0\n"
    ".popsection\n");
