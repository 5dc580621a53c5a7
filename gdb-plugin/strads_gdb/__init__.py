"""strads' gdb plugin: pretty-printers, xmethods and `strads` commands for strads programs.

Loaded like libstdc++'s printers: `import strads_gdb; strads_gdb.register(objfile)`, once per
objfile (the auto-load script embedded in programs linked with strads::strads does this).
"""

import gdb

from . import commands
from . import printers
from . import xmethods

_registered = set()


def register(objfile):
    """Registers the printers and xmethods for `objfile` (None: for every objfile)."""
    if not _registered:
        commands.register_commands()
        commands.install_hooks()
    key = id(objfile) if objfile is not None else None
    if key in _registered:
        return
    _registered.add(key)
    gdb.printing.register_pretty_printer(objfile, printers.build_printer(), replace=True)
    gdb.xmethod.register_xmethod_matcher(objfile, xmethods.DvectorMatcher(), replace=True)
    gdb.xmethod.register_xmethod_matcher(objfile, xmethods.DmatrixMatcher(), replace=True)
